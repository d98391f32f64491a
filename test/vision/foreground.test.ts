// Colour decontamination on a synthetic soft edge whose true foreground colour is known.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { colourFields, decontaminator } from '../../src/vision/foreground.ts';
import type { GuidePlanes } from '../../src/vision/guided-filter.ts';

const red = [200, 40, 30];
const blue = [30, 60, 220];

describe('foreground colour estimation', () => {
  it('removes the old background’s tint from semi-transparent edge pixels', async () => {
    // Red subject on the left, blue background on the right, mixed over a 40-pixel soft edge (like hair);
    // the radii are the paper’s (90 and 6).
    const width = 200, height = 20;
    const alpha = new Float32Array(width * height);
    const planes: GuidePlanes = [new Float32Array(width * height), new Float32Array(width * height), new Float32Array(width * height)];
    const photo = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = y * width + x;
        const a = Math.min(1, Math.max(0, (120 - x) / 40));
        alpha[i] = a;
        for (let c = 0; c < 3; c++) {
          const mixed = a * red[c]! + (1 - a) * blue[c]!;
          photo[i * 3 + c] = Math.round(mixed);
          planes[c]![i] = Math.round(mixed) / 255;
        }
      }
    }
    const fix = decontaminator(await colourFields(planes, alpha, width, height, 90, 6), width, height);
    const colour = new Float64Array(3);
    let before = 0, after = 0, count = 0;
    for (let x = 82; x < 118; x++) {
      const i = 10 * width + x;
      colour.set(photo.subarray(i * 3, i * 3 + 3));
      before += Math.hypot(...[0, 1, 2].map((c) => colour[c]! - red[c]!));
      fix(x, 10, alpha[i]!, colour);
      after += Math.hypot(...[0, 1, 2].map((c) => colour[c]! - red[c]!));
      count++;
    }
    // Composited on white, the raw photo colours would show a blue-purple fringe; the estimates stay red.
    assert.ok(after / count < 25 && after < before / 4, `estimated colours are ${(after / count).toFixed(1)} away from the true red on average`);
    assert.ok(before / count > 80, `the test edge should be visibly tinted (${(before / count).toFixed(1)})`);
  });

  it('leaves colours alone where the old background has the subject’s colour', async () => {
    const width = 60, height = 6;
    const alpha = new Float32Array(width * height);
    const planes: GuidePlanes = [new Float32Array(width * height).fill(0.5), new Float32Array(width * height).fill(0.5), new Float32Array(width * height).fill(0.5)];
    for (let i = 0; i < alpha.length; i++) alpha[i] = Math.min(1, Math.max(0, (40 - (i % width)) / 20));
    const fix = decontaminator(await colourFields(planes, alpha, width, height, 10, 2), width, height);
    const colour = new Float64Array([128, 128, 128]);
    fix(30, 3, 0.5, colour);
    for (const c of colour) assert.ok(Math.abs(c - 127.5) < 2, `grey on grey changed to ${[...colour]}`);
  });
});
