// The temporary files writes killed mid-way leave in a store's folder (writeFileAtomically names
// them `<key>.<pid>.<12 hex digits>.tmp`), beside files of the same shapes that are not ours.
import fs from 'node:fs';
import path from 'node:path';

const hourMs = 3_600_000;

export interface LeftoverWrites {
  /** Ours, last written two hours ago: no write is still using it. */
  stale: string;
  /** Ours, being written now. */
  fresh: string;
  /** Old files an operator or another program put there, which a sweep must never touch. */
  notOurs: string[];
}

/** `key` is a valid key of the store whose folder `dir` is. */
export function leaveWrites(dir: string, key: string): LeftoverWrites {
  const twoHoursAgo = new Date(Date.now() - 2 * hourMs);
  const leave = (name: string, old: boolean, make: (file: string) => void = (file) => fs.writeFileSync(file, 'half a file')): string => {
    make(path.join(dir, name));
    if (old) fs.utimesSync(path.join(dir, name), twoHoursAgo, twoHoursAgo);
    return name;
  };
  const stale = leave(`${key}.4242.0123456789ab.tmp`, true);
  const fresh = leave(`${key}.4242.ba9876543210.tmp`, false);
  const notOurs = [
    leave('notes.txt', true),
    leave(`${key}.tmp`, true),
    leave('backup.4242.0123456789ab.tmp', true),
    leave(`${key}.4242.cafe01234567.tmp`, true, (folder) => fs.mkdirSync(folder)),
  ];
  return { stale, fresh, notOurs };
}
