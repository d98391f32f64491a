// How the worker's one model session is configured from the environment.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { segmenterOptions } from '../../src/worker/start-worker.ts';

describe('segmenterOptions', () => {
  it('gives the one session every core and saves the optimised graph in the data folder', () => {
    const config = loadConfig({ CUTOUT_DATA_DIR: '/srv/cutout', CUTOUT_WORKER_CONCURRENCY: '2' });
    assert.deepEqual(segmenterOptions(config), {
      threads: os.availableParallelism(),
      cacheDir: path.resolve('/srv/cutout/models'),
    });
  });

  it('uses CUTOUT_INFERENCE_THREADS when it is set', () => {
    assert.equal(segmenterOptions(loadConfig({ CUTOUT_INFERENCE_THREADS: '3' })).threads, 3);
  });

  it('refuses a thread count of zero at start', () => {
    assert.throws(() => loadConfig({ CUTOUT_INFERENCE_THREADS: '0' }), /CUTOUT_INFERENCE_THREADS/);
  });
});
