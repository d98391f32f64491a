// The uploaded original as its owner sees it: in the colours the cutout is made from, where sharp
// alone would read the file otherwise (an AVIF's wide primaries named only by its nclx box, a
// TIFF's 32-bit samples).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../support/server.ts';
import { tiffOf } from '../support/tiff.ts';
import { goodPassword, uniqueEmail, WebClient } from './web-client.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({});
});
after(async () => server.close());

const side = 64;
const stored = [180, 120, 90];

/** A lossless AVIF of one colour, its nclx box (which sharp writes for lossless AVIF) naming Display P3 primaries. */
async function displayP3Avif(): Promise<Buffer> {
  const file = await sharp({ create: { width: side, height: side, channels: 3, background: { r: stored[0]!, g: stored[1]!, b: stored[2]! } } })
    .avif({ lossless: true })
    .toBuffer();
  const at = file.indexOf('colrnclx');
  assert.ok(at > 0, 'sharp wrote no nclx box');
  file.writeUInt16BE(12, at + 8);
  return file;
}

/** The same colour as a TIFF's 32-bit unsigned samples, which sharp alone takes at face value (white). */
function deepTiff(): Buffer {
  const samples = Array.from({ length: side * side * 3 }, (_, i) => stored[i % 3]! * 2 ** 24);
  return tiffOf({ width: side, height: side, channels: 3, bits: 32, format: 'uint', samples });
}

/** The mean colour of the original as the owner's page shows it. */
async function shownColour(upload: { name: string; data: Buffer; type: string }): Promise<number[]> {
  const client = new WebClient(server.url);
  await client.signUp(uniqueEmail(), goodPassword);
  await client.get('/app/remove');
  const { response } = await client.post('/app/removals', {}, upload);
  assert.equal(response.status, 303);
  const taskId = response.headers.get('location')?.split('/').pop() ?? '';
  const source = await server.db.selectFrom('web_task_sources').select('upload_key').where('task_id', '=', taskId).executeTakeFirstOrThrow();
  const shown = await fetch(`${server.url}/app/uploads/${source.upload_key}`, { headers: { cookie: client.cookieHeader() } });
  assert.equal(shown.status, 200);
  assert.equal(shown.headers.get('content-type'), 'image/webp');
  const { channels } = await sharp(Buffer.from(await shown.arrayBuffer())).stats();
  return channels.slice(0, 3).map((channel) => Math.round(channel.mean));
}

function assertNear(actual: number[], expected: number[], tolerance: number, what: string): void {
  assert.ok(actual.every((v, i) => Math.abs(v - expected[i]!) <= tolerance), `${what}: shown as (${actual.join(', ')}), expected (${expected.join(', ')})`);
}

test('an AVIF whose nclx box names Display P3 is shown in its sRGB colours, not its samples read as sRGB', async () => {
  // (180, 120, 90) in Display P3 is (190, 117, 84) in sRGB (SMPTE EG 432-1); the WebP is lossy.
  assertNear(await shownColour({ name: 'p3.avif', data: await displayP3Avif(), type: 'image/avif' }), [190, 117, 84], 3, 'Display P3 AVIF');
});

test("a TIFF's 32-bit samples are shown by their range, as the cutout reads them, not clipped to white", async () => {
  assertNear(await shownColour({ name: 'deep.tif', data: deepTiff(), type: 'image/tiff' }), stored, 3, '32-bit TIFF');
});
