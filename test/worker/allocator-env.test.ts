// npm start, the benches and docs/deploy.md agree on the allocator settings of a model process.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { allocatorEnv, withAllocatorEnv } from '../../src/allocator-env.ts';

describe('allocator settings', () => {
  it('are what npm start sets, each only where the environment does not set it already', () => {
    const start = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
    for (const [name, value] of Object.entries(allocatorEnv)) assert.ok(start.includes(`${name}=\${${name}:-${value}} `), `npm start sets ${name}=${value}: ${start}`);
    assert.equal([...start.matchAll(/MALLOC_\w+=/g)].length, Object.keys(allocatorEnv).length, 'npm start sets no other allocator variable');
  });

  it('fill in what a process environment leaves unset and keep what it sets', () => {
    const env = withAllocatorEnv({ PATH: '/bin', MALLOC_TRIM_THRESHOLD_: '0' });
    assert.equal(env.PATH, '/bin');
    assert.equal(env.MALLOC_TRIM_THRESHOLD_, '0');
    assert.equal(env.MALLOC_ARENA_MAX, allocatorEnv.MALLOC_ARENA_MAX);
    assert.equal(env.MALLOC_MMAP_THRESHOLD_, allocatorEnv.MALLOC_MMAP_THRESHOLD_);
  });
});
