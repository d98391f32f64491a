// Working-size planes in shared memory, reused from one task to the next (src/vision/shared-planes.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rowsAtMost, sharedPlanes } from '../../src/vision/shared-planes.ts';

describe('sharedPlanes', () => {
  it('hands a task the memory the last task released', () => {
    const first = sharedPlanes();
    const plane = first.plane(1000);
    assert.ok(plane.buffer instanceof SharedArrayBuffer);
    first.release();
    const next = sharedPlanes();
    assert.equal(next.plane(1000).buffer, plane.buffer);
    next.release();
  });

  it('never gives two sets in use the same memory', () => {
    const a = sharedPlanes();
    const b = sharedPlanes();
    const [pa, pb] = [a.plane(500), b.plane(500)];
    assert.notEqual(pa.buffer, pb.buffer);
    a.release();
    const c = sharedPlanes();
    assert.equal(c.plane(500).buffer, pa.buffer, 'the released one is reused');
    pb.fill(7);
    assert.ok(c.plane(500).every((v) => v !== 7), 'and holds nothing of the set still in use');
    b.release();
    c.release();
  });

  it('lays planes out one after another, each on its own cache lines', () => {
    const set = sharedPlanes();
    const planes = [set.plane(5), set.plane(7), set.plane(3)];
    for (let i = 1; i < planes.length; i++) {
      assert.ok(planes[i]!.byteOffset >= planes[i - 1]!.byteOffset + planes[i - 1]!.byteLength, 'no overlap');
    }
    for (const plane of planes) assert.equal(plane.byteOffset % 64, 0);
    set.release();
  });

  it('gives back what an outgrown set took as one block, so the next set needs no more and holds no more', () => {
    // Larger than any set released before in this file: the set outgrows the block it reuses.
    const set = sharedPlanes();
    set.plane(100);
    set.plane(40_000);
    set.plane(100);
    set.release();
    const next = sharedPlanes();
    const again = [next.plane(100), next.plane(40_000), next.plane(100)];
    assert.equal(new Set(again.map((p) => p.buffer)).size, 1, 'one block');
    assert.equal(again[0]!.buffer.byteLength, 448 + 160_000 + 448, 'the planes taken, each rounded up to whole cache lines');
    next.release();
  });

  it('hands out byte rows from the same shared memory, after the planes and on cache lines of their own', () => {
    const set = sharedPlanes();
    const plane = set.plane(5);
    const rows = set.bytes(30)!;
    assert.ok(rows.buffer instanceof SharedArrayBuffer);
    assert.equal(rows.buffer, plane.buffer);
    assert.equal(rows.byteOffset, 64);
    assert.equal(set.bytes(3)!.byteOffset, 128);
    set.release();
  });

  it('hands out no more rows than rowsAtMost in all, and keeps every set released', () => {
    const set = sharedPlanes();
    assert.equal(set.bytes(rowsAtMost + 1), null, 'a very large photo keeps its rows in buffers of its own');
    assert.ok(set.bytes(rowsAtMost - 1000));
    assert.equal(set.bytes(1001), null, 'nor rows past it beside others');
    assert.ok(set.bytes(1000));
    set.release();
    // Kept, in one block the size of all it took: the next set needs nothing new for as much.
    const next = sharedPlanes();
    const plane = next.plane(10);
    assert.ok(plane.buffer.byteLength >= rowsAtMost, `the next set starts with ${plane.buffer.byteLength} bytes`);
    assert.ok(next.bytes(rowsAtMost - 1000)!.buffer === plane.buffer, 'and takes the rows there');
    next.release();
  });

  it('refuses planes from a set already released', () => {
    const set = sharedPlanes();
    set.release();
    assert.throws(() => set.plane(10), /released/);
    assert.throws(() => set.bytes(10), /released/);
  });
});
