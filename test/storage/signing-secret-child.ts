// One of several processes loading the signing secret of the same fresh data folders at the same
// instants: it says "ready", reads the shared start time from stdin, then loads trial i's folder at
// start + i * spacing and prints what it got (the secret in hex, or the error's code) as JSON.
import path from 'node:path';
import readline from 'node:readline';
import { loadSigningSecret } from '../../src/storage/signed-url.ts';

const [base = '', trials = '0', spacingMs = '0'] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin });
process.stdout.write('ready\n');
const [start] = await lines[Symbol.asyncIterator]().next().then((r) => [Number(r.value)]);
lines.close();
const got: string[] = [];
for (let i = 0; i < Number(trials); i++) {
  // Busy-waiting, not a timer: a timer's wake-up jitter would spread the processes apart.
  while (Date.now() < start! + i * Number(spacingMs));
  try {
    got.push(loadSigningSecret(path.join(base, String(i)), undefined).toString('hex'));
  } catch (err) {
    got.push(`error ${(err as { code?: string }).code ?? (err as Error).message}`);
  }
}
process.stdout.write(`${JSON.stringify(got)}\n`);
