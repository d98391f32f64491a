// The optimised graph is saved in the data folder on the first start and read back on later ones.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { loadOptimizedModel, optimizedModelFileName, type ModelSource } from '../../src/vision/optimized-model.ts';
import { sessionOptions } from '../../src/vision/model-session.ts';

const { onnx } = onnxProto;

/** y = relu(x + bias) over 4 floats: small, but with something for the optimiser to keep. */
function tinyModel(bias: number[]): Uint8Array {
  const floats = (name: string) => ({ name, type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 1 }, { dimValue: 4 }] } } } });
  return onnx.ModelProto.encode({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 15 }],
    graph: {
      name: 'tiny',
      input: [floats('x')],
      output: [floats('y')],
      initializer: [{ name: 'bias', dataType: onnx.TensorProto.DataType.FLOAT, dims: [1, 4], floatData: bias }],
      node: [
        { opType: 'Add', input: ['x', 'bias'], output: ['sum'], name: 'add' },
        { opType: 'Relu', input: ['sum'], output: ['y'], name: 'relu' },
      ],
    },
  }).finish();
}

function countingSource(identity: string, bias: number[]): ModelSource & { builds: number } {
  return {
    identity,
    builds: 0,
    async build() {
      this.builds++;
      return tinyModel(bias);
    },
  };
}

async function run(session: ort.InferenceSession): Promise<number[]> {
  const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([1, -5, 2, 0]), [1, 4]) });
  return Array.from(out.y!.data as Float32Array);
}

const dirs: string[] = [];
function cacheDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-model-cache-'));
  dirs.push(dir);
  return path.join(dir, 'models');
}
after(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const options = sessionOptions({ threads: 1 });

describe('loadOptimizedModel', () => {
  it('names the saved graph for the CPU by its flags too, so a data folder moved to a CPU of the same name with other vector units builds its own', () => {
    const zen4 = { model: 'AMD EPYC', flags: ['avx2', 'avx512f', 'avx512_vnni'] };
    const zen3 = { model: 'AMD EPYC', flags: ['avx2', 'fma'] };
    assert.notEqual(optimizedModelFileName('tiny-v1', options, zen4), optimizedModelFileName('tiny-v1', options, zen3));
    assert.equal(optimizedModelFileName('tiny-v1', options, zen3), optimizedModelFileName('tiny-v1', options, { ...zen3 }));
  });

  it('optimises once, saves the graph, and reads it back on the next start without building again', async () => {
    const dir = cacheDir();
    const source = countingSource('tiny-v1', [1, 1, 1, 1]);
    const first = await loadOptimizedModel(dir, options, source);
    assert.deepEqual(await run(first), [2, 0, 3, 1]);
    assert.equal(source.builds, 1);
    assert.deepEqual(fs.readdirSync(dir), [optimizedModelFileName('tiny-v1', options)], 'one saved graph, no partial file left');

    const second = await loadOptimizedModel(dir, options, source);
    assert.deepEqual(await run(second), [2, 0, 3, 1]);
    assert.equal(source.builds, 1, 'the saved graph was used');
  });

  it('does not reuse a graph saved for another model', async () => {
    const dir = cacheDir();
    await loadOptimizedModel(dir, options, countingSource('tiny-v1', [1, 1, 1, 1]));
    const other = countingSource('tiny-v2', [10, 10, 10, 10]);
    assert.deepEqual(await run(await loadOptimizedModel(dir, options, other)), [11, 5, 12, 10]);
    assert.equal(other.builds, 1);
    assert.equal(fs.readdirSync(dir).length, 2);
  });

  it('rebuilds a saved graph that cannot be read', async () => {
    const dir = cacheDir();
    const source = countingSource('tiny-v1', [1, 1, 1, 1]);
    await loadOptimizedModel(dir, options, source);
    const file = path.join(dir, optimizedModelFileName('tiny-v1', options));
    fs.writeFileSync(file, 'not a model');
    assert.deepEqual(await run(await loadOptimizedModel(dir, options, source)), [2, 0, 3, 1]);
    assert.equal(source.builds, 2);
    assert.ok(fs.statSync(file).size > 'not a model'.length, 'the damaged file was replaced');
  });
});

describe('sessionOptions', () => {
  it('refuses a thread count that is not a positive integer', () => {
    assert.throws(() => sessionOptions({ threads: 0 }), /positive integer/);
    assert.throws(() => sessionOptions({ threads: 1.5 }), /positive integer/);
    assert.equal(sessionOptions({ threads: 3 }).intraOpNumThreads, 3);
  });

  it("asks onnxruntime to stop its threads' spinning when a run ends, so the refinement after it gets the cores", () => {
    assert.deepEqual(sessionOptions({ threads: 2 }).extra, { session: { force_spinning_stop: '1' } });
  });
});
