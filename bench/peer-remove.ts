// The peer's own removeBackground() (`@imgly/background-removal-node`, a dev dependency, AGPL-3.0):
// called only by the benches, never by the service.
import path from 'node:path';
import { createRequire } from 'node:module';

export type PeerRemove = (input: Buffer, type: string) => Promise<Buffer>;

/** The peer with its default `medium` model and PNG out, its model files read from its own package. */
export async function loadPeer(): Promise<PeerRemove> {
  const peer = await import('@imgly/background-removal-node');
  const entry = createRequire(import.meta.url).resolve('@imgly/background-removal-node');
  const publicPath = `file://${path.dirname(entry)}/`;
  return async (input, type) => {
    const blob = await peer.removeBackground(new Blob([new Uint8Array(input)], { type }), { publicPath, model: 'medium', output: { format: 'image/png' } });
    return Buffer.from(await blob.arrayBuffer());
  };
}

const imageTypes: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };

/** The media type the peer is told for a photo file, from its extension. */
export function imageType(file: string): string {
  return imageTypes[path.extname(file).toLowerCase()] ?? 'image/png';
}

/** The peer's cutout of a photo file's bytes, decoded to RGBA (its palette PNG as a viewer would show it). */
export async function peerCutout(remove: PeerRemove, bytes: Buffer, file: string): Promise<Uint8Array> {
  const png = await remove(bytes, imageType(file));
  // Loaded here, not with the module: `npm run bench`'s peer process imports this module, and its
  // peak RSS should hold the peer's own libraries only.
  const { default: sharp } = await import('sharp');
  return new Uint8Array(await sharp(png).ensureAlpha().raw().toBuffer());
}
