// Starts one of this folder's thread modules: as JavaScript when built, as TypeScript through tsx
// when run from source (tests, benches). The process's other --import hooks are not for threads.
import { Worker } from 'node:worker_threads';

export function startThread(module: 'inference-thread' | 'band-thread', workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${module}.js`, import.meta.url), { workerData, execArgv: [] });
  // A thread does not get tsx's hooks from --import before its first module loads, so it registers them itself.
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL(`./${module}.ts`, import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, execArgv: [] });
}
