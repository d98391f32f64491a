// How many threads libvips gives each image in a process started as npm start starts the worker.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { describe, it } from 'node:test';
import { withAllocatorEnv } from '../../src/allocator-env.ts';

/** sharp's concurrency as a fresh process with the allocator settings reports it, after importing `modules`. */
function concurrencyAfter(modules: string[]): number {
  const imports = modules.map((m) => `await import(${JSON.stringify(new URL(m, import.meta.url).href)});`).join('');
  const code = `${imports} const { default: sharp } = await import('sharp'); console.log(sharp.concurrency());`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { env: withAllocatorEnv(process.env), encoding: 'utf8' });
  return Number(out.trim());
}

describe('libvips threads', () => {
  it('sharp alone leaves one per core where MALLOC_ARENA_MAX is set, as our processes set it', { skip: os.availableParallelism() < 2 && 'one core: the two settings agree' }, () => {
    assert.equal(concurrencyAfter([]), os.availableParallelism());
  });

  it('once the decoder is loaded, each image gets one thread, in a worker process as started', () => {
    assert.equal(concurrencyAfter(['../../src/vision/decode.ts']), 1);
  });
});
