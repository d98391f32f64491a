import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, postgresUrl } from '../support/engines.ts';

// .ci/run sets CUTOUT_TEST_POSTGRES_URL when PostgreSQL is installed; if it is set, the server
// must answer, so a broken database set-up fails CI instead of quietly testing SQLite alone.
test('PostgreSQL named by CUTOUT_TEST_POSTGRES_URL answers and gives each test its own database', { skip: postgresUrl ? false : 'CUTOUT_TEST_POSTGRES_URL is not set: the PostgreSQL variants are skipped' }, async () => {
  const database = await createTestDatabase();
  try {
    assert.match(new URL(database.url).pathname, /^\/cutout_test_[0-9a-f]{12}$/);
  } finally {
    await database.drop();
  }
});
