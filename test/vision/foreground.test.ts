// Colour decontamination on a synthetic soft edge whose true foreground colour is known.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeBand } from '../../src/vision/compose.ts';
import { colourFields, type ColourFields } from '../../src/vision/foreground.ts';
import type { GuidePlanes } from '../../src/vision/guided-filter.ts';

const red = [200, 40, 30];

/** The RGBA cutout of a 3-channel photo with alpha bytes (α·255 rounded) and the colour fields, composed as the pipeline composes it. */
function compose(photo: Uint8Array, alpha: Float32Array, fields: ColourFields, width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height * 4);
  const bytes = Uint8Array.from(alpha, (a) => Math.round(a * 255));
  composeBand({ width, height, channels: 3, from: 0, to: height, pixels: photo, matte: { alpha: { kind: 'bytes', data: bytes }, colours: fields }, target: { kind: 'rgba', out } });
  return out;
}
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
    const cutout = compose(photo, alpha, await colourFields(planes, alpha, width, height, 90, 6), width, height);
    let before = 0, after = 0, count = 0;
    for (let x = 82; x < 118; x++) {
      const i = 10 * width + x;
      before += Math.hypot(...[0, 1, 2].map((c) => photo[i * 3 + c]! - red[c]!));
      after += Math.hypot(...[0, 1, 2].map((c) => cutout[i * 4 + c]! - red[c]!));
      assert.equal(cutout[i * 4 + 3], Math.round(alpha[i]! * 255), `alpha at ${x}`);
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
    const photo = new Uint8Array(width * height * 3).fill(128);
    const cutout = compose(photo, alpha, await colourFields(planes, alpha, width, height, 10, 2), width, height);
    for (let x = 21; x < 40; x++) {
      const colour = [...cutout.subarray((3 * width + x) * 4, (3 * width + x) * 4 + 3)];
      assert.ok(colour.every((c) => Math.abs(c - 128) <= 1), `grey on grey changed to ${colour} at ${x}`);
    }
  });
});
