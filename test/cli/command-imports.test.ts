// The operator's commands (accounts, credits, keys) start without loading the HTTP stack, which
// `serve` alone needs: it nearly doubled the time such a command takes. Each command runs in a
// fresh process, which reports at its exit the CommonJS packages it loaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

const root = path.join(import.meta.dirname, '../..');
let dir: string;
let reporter: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-cli-imports-'));
  reporter = path.join(dir, 'report-packages.cjs');
  fs.writeFileSync(
    reporter,
    "process.on('exit', () => process.stderr.write('\\nloaded:' + JSON.stringify(Object.keys(require.cache)) + '\\n'));\n",
  );
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function packagesLoadedBy(args: string[]): Promise<{ packages: Set<string>; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--require', reporter, '--import', 'tsx', path.join(root, 'src/cli/main.ts'), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', CUTOUT_DATA_DIR: path.join(dir, 'data') } },
      (err, _stdout, stderr) => {
        const line = stderr.split('\n').find((l) => l.startsWith('loaded:'));
        if (!line) return reject(err ?? new Error(`no package report in: ${stderr}`));
        const files = JSON.parse(line.slice('loaded:'.length)) as string[];
        const packages = new Set(files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name): name is string => !!name));
        resolve({ packages, stderr });
      },
    );
  });
}

test('an account command opens the database without loading the HTTP server', async () => {
  const { packages, stderr } = await packagesLoadedBy(['accounts', 'show', 'acc_missing']);
  assert.match(stderr, /account_not_found/, 'the command ran against the database');
  assert.ok(packages.has('better-sqlite3'), `the store's packages are seen (${[...packages].join(', ')})`);
  assert.ok(!packages.has('fastify'), 'fastify is loaded');
});
