// Run as a child process by the migration test: opens (and so migrates) the store, then exits.
import { openDatabase } from '../../src/store/database.ts';

const db = await openDatabase({ dataDir: process.argv[2] ?? '', databaseUrl: process.argv[3] || undefined, poolSize: 1 });
await db.destroy();
