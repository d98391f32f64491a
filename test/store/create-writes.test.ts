import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { isWellFormedId } from '../../src/domain/ids.ts';
import { createAccount } from '../../src/store/accounts-repository.ts';
import { openDatabase, type Db } from '../../src/store/database.ts';
import { inGroupCommit } from '../../src/store/group-commit.ts';
import { createTask } from '../../src/store/tasks-repository.ts';

const input = { image_url: 'https://example.test/a.png', subject: 'auto', precision: 'standard', output_format: 'png' } as const;

/** The temporary files this process holds open: SQLite's are unlinked at once and named etilqs_…. */
function openTemporaryFiles(): string[] {
  return fs
    .readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return fs.readlinkSync(path.join('/proc/self/fd', fd));
      } catch {
        return '';
      }
    })
    .filter((target) => target.includes('etilqs_'));
}

describe('what task creates write to a SQLite store', () => {
  let dir: string;
  let db: Db;
  /** A second connection to the same file, to read the write-ahead log's size. */
  let other: SQLite.Database;
  let accountId: string;
  const createAt = (now: number) => createTask(db, { accountId, input, idempotencyKey: undefined, maxActiveTasks: 1_000_000 }, now);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-create-writes-'));
    db = await openDatabase({ dataDir: dir });
    other = new SQLite(path.join(dir, 'cutout.sqlite'));
    accountId = (await createAccount(db, { email: 'writes@example.test', plan: 'paid', credits: 1_000_000 })).id;
  });
  after(async () => {
    other.close();
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('task ids begin with their creation time, sort in the order their tasks were created, keep the shape bgr_ and 20 characters, and differ within one millisecond', async () => {
    const start = Date.UTC(2026, 10, 28);
    const ids: string[] = [];
    for (const now of [start, start, start + 1, start + 999, start + 86_400_000, Date.UTC(2100, 0, 1)]) {
      const { task } = await createAt(now);
      assert.ok(isWellFormedId('bgr', task.id), task.id);
      assert.equal(parseInt(task.id.slice('bgr_'.length, 'bgr_'.length + 9), 36), task.created_at, 'the first 9 characters are its creation time');
      ids.push(task.id);
    }
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(ids.slice(2), [...ids.slice(2)].sort(), 'later tasks have later ids');
    assert.ok(ids.slice(2).every((id) => id > ids[0]! && id > ids[1]!));
  });

  test('a group of creates on an account with thousands of tasks adds fewer pages to the log than it has creates, and opens no temporary file', async () => {
    const now = Date.now();
    const temporaryFiles = new Set<string>();
    /** A group of creates, with a last call that looks for temporary files while the group's savepoints are still open. */
    const group = (size: number, first: number) =>
      Promise.all([
        ...Array.from({ length: size }, (_, i) => createAt(first + i)),
        inGroupCommit(db, async () => {
          for (const file of openTemporaryFiles()) temporaryFiles.add(file);
        }),
      ]);
    for (let i = 0; i < 40; i++) await group(63, now - 100_000 + i * 63);
    other.pragma('wal_checkpoint(TRUNCATE)');
    const creates = 32;
    await group(creates, now);
    const [{ log }] = other.pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
    // Wholly random ids put each task into a page of its own of the tasks' id index and of the ledger's task index.
    assert.ok(log > 0 && log < creates, `${log} pages in the log for ${creates} creates`);
    // Past 64 KiB SQLite would spill the savepoints' sub-journal to a temporary file.
    assert.deepEqual([...temporaryFiles], []);
  });
});
