// The edits made to the shipped graph before it is optimised: what they keep, what they convert,
// and that the edited graph computes the same mask as the shipped one.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { editGraph, halvesToFloats } from '../../src/vision/model-graph.ts';
import { readModelWeights } from '../../src/vision/model-weights.ts';
import { fixture, fixturesDir, groundTruth, iou } from '../support/fixtures.ts';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;

describe('halvesToFloats', () => {
  it('decodes half-precision values exactly, subnormals and infinities included', () => {
    const halves = new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x7c00, 0xfc00, 0x0000, 0x8000]);
    const floats = new Float32Array(halvesToFloats(new Uint8Array(halves.buffer)).buffer);
    assert.deepEqual(Array.from(floats), [1, -2, 65504, 2 ** -24, 0.333251953125, Infinity, -Infinity, 0, -0]);
  });
});

describe('editGraph on the shipped ISNet graph', async () => {
  const shipped = await readModelWeights();
  const edited = editGraph(shipped, { output: 'output', float32: true });
  const graph = onnx.ModelProto.decode(edited).graph!;

  it('keeps only the mask output and the nodes that compute it', () => {
    const original = onnx.ModelProto.decode(shipped).graph!;
    assert.deepEqual(graph.output!.map((o) => o.name), ['output']);
    assert.equal(original.output!.length, 12);
    assert.ok(graph.node!.length < original.node!.length, 'the side outputs’ nodes are gone');
    const produced = new Set(graph.node!.flatMap((n) => n.output ?? []));
    const available = new Set([...produced, ...graph.input!.map((i) => i.name), ...graph.initializer!.map((i) => i.name)]);
    for (const node of graph.node!) for (const input of node.input ?? []) if (input) assert.ok(available.has(input), `${node.name} reads ${input}`);
  });

  it('stores every weight as fp32 and casts nothing to fp16', () => {
    assert.ok(graph.initializer!.every((t) => t.dataType === FLOAT));
    const casts = graph.node!.filter((n) => n.opType === 'Cast');
    assert.ok(casts.every((n) => Number(n.attribute!.find((a) => a.name === 'to')!.i) !== FLOAT16));
  });

  it('computes the same mask as the shipped graph on a real photo', async () => {
    const name = 'am-gt07';
    const rgb = await sharp(path.join(fixturesDir, fixture(name).image)).removeAlpha().resize(1024, 1024, { fit: 'fill' }).raw().toBuffer();
    const input = new Float32Array(3 * 1024 * 1024);
    for (let i = 0; i < 1024 * 1024; i++) for (let c = 0; c < 3; c++) input[c * 1024 * 1024 + i] = (rgb[i * 3 + c]! - 128) / 256;
    const masks: Float32Array[] = [];
    for (const model of [shipped, edited]) {
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 2, enableMemPattern: false });
      const out = await session.run({ input: new ort.Tensor('float32', input, [1, 3, 1024, 1024]) }, ['output']);
      masks.push(out.output!.data as Float32Array);
      await session.release();
    }
    let worst = 0;
    for (let i = 0; i < masks[0]!.length; i++) worst = Math.max(worst, Math.abs(masks[0]![i]! - masks[1]![i]!));
    // fp16 activations round to ~3 significant digits; the masks may differ by that, not more.
    assert.ok(worst < 0.05, `largest difference ${worst}`);
    const { width, height } = fixture(name);
    const toSource = (mask: Float32Array) =>
      sharp(Uint8ClampedArray.from(mask, (v) => v * 255), { raw: { width: 1024, height: 1024, channels: 1 } }).resize(width, height, { fit: 'fill' }).extractChannel(0).raw().toBuffer();
    const truth = await groundTruth(name);
    const [before, after] = [iou(await toSource(masks[0]!), truth), iou(await toSource(masks[1]!), truth)];
    assert.ok(Math.abs(before - after) < 0.005, `IoU ${before} before, ${after} after`);
  });

  it('with anySide, takes any multiple of 64: the same mask at 1024, and at 1152 a mask of the photo at 1152²', async () => {
    const anySide = editGraph(shipped, { output: 'output', float32: true, anySide: true });
    const resizes = onnx.ModelProto.decode(anySide).graph!.node!.filter((n) => n.opType === 'Resize');
    assert.ok(resizes.length > 0 && resizes.every((n) => n.input!.length === 3), 'every Resize takes scales, not sizes');
    const name = 'am-gt07';
    const tensor = async (side: number) => {
      const rgb = await sharp(path.join(fixturesDir, fixture(name).image)).removeAlpha().resize(side, side, { fit: 'fill' }).raw().toBuffer();
      const input = new Float32Array(3 * side * side);
      for (let i = 0; i < side * side; i++) for (let c = 0; c < 3; c++) input[c * side * side + i] = (rgb[i * 3 + c]! - 128) / 256;
      return new ort.Tensor('float32', input, [1, 3, side, side]);
    };
    const run = async (model: Uint8Array, side: number) => {
      const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 2, enableMemPattern: false });
      const out = await session.run({ input: await tensor(side) }, ['output']);
      await session.release();
      return out.output!;
    };
    const [fixed, any] = [await run(edited, 1024), await run(anySide, 1024)];
    let worst = 0;
    for (let i = 0; i < fixed.data.length; i++) worst = Math.max(worst, Math.abs((fixed.data[i] as number) - (any.data[i] as number)));
    assert.ok(worst < 1e-5, `largest difference at 1024: ${worst}`);
    const larger = await run(anySide, 1152);
    assert.deepEqual(larger.dims, [1, 1, 1152, 1152]);
    const { width, height } = fixture(name);
    const toSource = (mask: Float32Array, side: number) =>
      sharp(Uint8ClampedArray.from(mask, (v) => v * 255), { raw: { width: side, height: side, channels: 1 } }).resize(width, height, { fit: 'fill' }).extractChannel(0).raw().toBuffer();
    const truth = await groundTruth(name);
    const [at1024, at1152] = [iou(await toSource(any.data as Float32Array, 1024), truth), iou(await toSource(larger.data as Float32Array, 1152), truth)];
    // The model sees the photo at another scale, so its mask differs somewhat, and is still the photo's.
    assert.ok(at1024 > 0.95 && at1152 > 0.9, `IoU ${at1024} at 1024, ${at1152} at 1152`);
  });

  it('refuses an output the graph does not have', () => {
    assert.throws(() => editGraph(shipped, { output: 'nope', float32: false }), /no output named nope/);
  });
});
