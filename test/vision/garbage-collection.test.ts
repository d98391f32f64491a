// The pipeline's process marks its garbage in one pause (src/vision/garbage-collection.ts) unless
// Node was started with --incremental-marking, whether Node was started without it or the process
// turns it off as its model loads. V8's flags hold for a whole process, so each case
// runs in a process of its own.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { collectYoung } from '../../src/vision/garbage-collection.ts';
import type { CollectionKinds } from '../support/collections.ts';

const child = path.join(import.meta.dirname, '../support/collections-child.ts');

async function kindsIn(nodeFlags: string[]): Promise<CollectionKinds> {
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '--import', 'tsx', child]);
  return JSON.parse(stdout) as CollectionKinds;
}

describe('markAtomically', () => {
  it('leaves the process collecting large buffers in whole pauses, with no incremental marking', async () => {
    const { major, incremental, kinds } = await kindsIn([]);
    assert.ok(major, `collections of the whole heap happened (kinds ${kinds.join(', ')})`);
    assert.ok(!incremental, `no incremental marking (kinds ${kinds.join(', ')})`);
  });

  it('leaves a process that Node started with --no-incremental-marking (npm start, npm test) marking in whole pauses', async () => {
    const { major, incremental, kinds } = await kindsIn(['--no-incremental-marking']);
    assert.ok(major, `collections of the whole heap happened (kinds ${kinds.join(', ')})`);
    assert.ok(!incremental, `no incremental marking (kinds ${kinds.join(', ')})`);
  });

  it('keeps incremental marking in a process that Node started with --incremental-marking', async () => {
    const { incremental, kinds } = await kindsIn(['--incremental-marking']);
    assert.ok(incremental, `incremental marking (kinds ${kinds.join(', ')})`);
  });
});

describe('collectYoung', () => {
  it('frees a large buffer just dropped, without waiting for the next collection of the whole heap', async () => {
    const held = () => process.memoryUsage().arrayBuffers;
    const before = held();
    // Dropped in the same turn, as a band thread drops the photo it decoded: still in the young generation.
    let buffer: Uint8Array | undefined = new Uint8Array(32 << 20).fill(1);
    const size = buffer.length;
    assert.ok(held() >= before + size);
    buffer = undefined;
    collectYoung();
    // Its memory is given back as the collection sweeps its buffers, on a thread of V8's beside this
    // one: on a busy machine that took more than the three turns of the event loop this test once
    // waited (a CI run), so it waits for as many turns as come within two seconds.
    const deadline = performance.now() + 2000;
    while (held() >= before + size && performance.now() < deadline) await nextTurn();
    assert.ok(held() < before + size, `still held: ${held() - before} bytes more than before`);
  });
});
