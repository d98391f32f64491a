// Run as a child process by the store tests: says it is ready, opens (and so migrates) the store
// when its stdin closes, so that the test picks the moment, then exits.
import { openDatabase } from '../../src/store/database.ts';

process.stdout.write('ready\n');
for await (const _ of process.stdin);
const db = await openDatabase({ dataDir: process.argv[2] ?? '', databaseUrl: process.argv[3] || undefined, poolSize: 1 });
await db.destroy();
