// Only the inference thread loads onnxruntime and the ONNX graph tooling (model-session.ts): the
// service's own thread, which serves HTTP and runs the pipeline around inference, imports the input
// sides from model-sides.ts instead. Their code and data would otherwise sit in its heap, and every
// full garbage collection, a pause of that thread, would mark them. Each case imports in a fresh
// process, since a module once loaded stays loaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const root = path.join(import.meta.dirname, '../..');

/** The CommonJS packages (onnxruntime-node and onnx-proto are) loaded once `modules` are imported. */
async function packagesLoadedBy(modules: string[]): Promise<Set<string>> {
  const imports = modules.map((m) => `await import(${JSON.stringify(path.join(root, m))});`).join(' ');
  const script = `${imports} const { createRequire } = await import('node:module'); console.log(JSON.stringify(Object.keys(createRequire(${JSON.stringify(root + '/')}).cache)));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
  const files = JSON.parse(stdout) as string[];
  return new Set(files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name): name is string => !!name));
}

describe("the service's main thread", () => {
  it('loads neither onnxruntime nor the graph tooling with the server, the worker and the pipeline', async () => {
    const loaded = await packagesLoadedBy(['src/server.ts', 'src/worker/worker-process.ts', 'src/vision/remove-background.ts', 'src/cli/remove.ts']);
    assert.ok(loaded.has('fastify') && loaded.has('better-sqlite3'), `the server's packages are seen (${[...loaded].join(', ')})`);
    assert.ok(!loaded.has('onnxruntime-node'), 'onnxruntime-node is loaded');
    assert.ok(!loaded.has('onnx-proto'), 'onnx-proto is loaded');
  });

  it("is checked by what a module that does load them shows: the session module brings both", async () => {
    const loaded = await packagesLoadedBy(['src/vision/model-session.ts']);
    assert.ok(loaded.has('onnxruntime-node') && loaded.has('onnx-proto'), [...loaded].join(', '));
  });
});
