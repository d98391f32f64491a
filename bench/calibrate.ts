// `npm run calibrate`: measures the fp32 graph's activation ranges on all the shared fixtures and
// writes them to src/vision/int8-ranges.json, from which the INT8 graph is built at first start.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rangesFile, rangesSchema } from '../src/vision/int8-ranges.ts';
import { editGraph } from '../src/vision/model-graph.ts';
import { readModelWeights } from '../src/vision/model-weights.ts';
import { calibrate, calibrationPercentile } from './calibration.ts';
import { fixturesDir, readManifest } from './images.ts';

const images = readManifest().map((m) => ({ name: m.name, file: path.join(fixturesDir, m.image) }));
const fp32 = editGraph(await readModelWeights(), { output: 'output', float32: true });
const started = performance.now();
const ranges = await calibrate(fp32, images, calibrationPercentile, 2);
// Eight significant digits keep the input's exact range ((0 − 128) / 256 … (255 − 128) / 256).
const rounded = JSON.stringify(rangesSchema.parse(ranges), (_, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(8)) : v), 1);
fs.writeFileSync(rangesFile, `${rounded}\n`);
console.log(`${Object.keys(ranges.tensors).length} tensors over ${images.length} images in ${((performance.now() - started) / 1000).toFixed(1)} s → ${path.relative(process.cwd(), fileURLToPath(rangesFile))}`);
