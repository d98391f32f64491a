// What this test process holds open: the server under test runs in it, so a file it forgot to close
// shows among the process's descriptors.
import fs from 'node:fs/promises';

/** Descriptors this process holds open on `name` in a results folder. */
export async function openDescriptorsOnResult(name: string): Promise<number> {
  const links = await Promise.all((await fs.readdir('/proc/self/fd')).map((fd) => fs.readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return links.filter((target) => target.endsWith(`/results/${name}`)).length;
}
