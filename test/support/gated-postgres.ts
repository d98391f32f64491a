// A test server on a fresh PostgreSQL database that it reaches through a TCP gate, so that a test
// can make the database go away (shut), hang (freeze, silence) and come back (open).
import { createTestDatabase } from './engines.ts';
import { startTestServer, type TestServer } from './server.ts';
import { startTcpGate, type TcpGate } from './tcp-gate.ts';

export interface GatedPostgres {
  server: TestServer;
  gate: TcpGate;
  /** The database's own URL, not through the gate. */
  directUrl: string;
  /** The same database through the gate. */
  gatedUrl: string;
  close(): Promise<void>;
}

export async function startGatedPostgresServer(env: Record<string, string> = {}): Promise<GatedPostgres> {
  const database = await createTestDatabase();
  const gate = await startTcpGate(Number(new URL(database.url).port || 5432));
  const gated = new URL(database.url);
  gated.hostname = '127.0.0.1';
  gated.port = String(gate.port);
  const server = await startTestServer({ ...env, DATABASE_URL: gated.toString() });
  return {
    server,
    gate,
    directUrl: database.url,
    gatedUrl: gated.toString(),
    async close() {
      gate.open();
      await server.close();
      await gate.close();
      await database.drop();
    },
  };
}
