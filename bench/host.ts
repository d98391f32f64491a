// `npm run bench:host`, and the second line of `npm run bench` and `npm run bench:api`: what this
// machine charges for the things the pipeline and the API do besides arithmetic. Two guests of one
// CPU model have differed by up to twice in the work around inference and about four times in the
// API's polls per second (the README's sections by machine) while the model's passes differed less:
// a pass keeps both cores busy inside one library, where the work around it hands over between
// threads, calls the kernel and writes to new memory, and the API is system calls and wake-ups
// between processes.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fixed, median } from './stats.ts';

export interface HostFacts {
  /** One fstat of an open file: a system call, with Node's small overhead around it. */
  syscallMicros: number;
  /** A message to a waiting thread and its answer, sent back to back. */
  roundTripMicros: number;
  /** The same after the two threads sat idle for 10 ms, as between a task's stages. */
  roundTripAfterIdleMicros: number;
  /** The first write to a 4 KiB page of newly allocated memory, beyond what a second write costs. */
  pageFirstTouchMicros: number;
}

const pageBytes = 4096;

function syscallMicros(): number {
  const fd = fs.openSync(import.meta.filename, 'r');
  try {
    const calls = 20_000;
    for (let i = 0; i < 1000; i++) fs.fstatSync(fd);
    const started = performance.now();
    for (let i = 0; i < calls; i++) fs.fstatSync(fd);
    return ((performance.now() - started) * 1000) / calls;
  } finally {
    fs.closeSync(fd);
  }
}

async function roundTrips(idleMs: number, count: number): Promise<number> {
  const worker = new Worker(`require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));`, { eval: true });
  try {
    const trips: number[] = [];
    for (let i = 0; i < count; i++) {
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
      const started = performance.now();
      await new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage(i);
      });
      trips.push((performance.now() - started) * 1000);
    }
    return median(trips.slice(Math.floor(count / 10)));
  } finally {
    await worker.terminate();
  }
}

/** Each sample in memory of its own, all held until the end, so that none reuses pages another touched. */
function pageFirstTouchMicros(): number {
  const bytes = 64 << 20;
  const held: Uint8Array[] = [];
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const memory = new Uint8Array(bytes);
    held.push(memory);
    let started = performance.now();
    memory.fill(1);
    const first = performance.now() - started;
    started = performance.now();
    memory.fill(2);
    const second = performance.now() - started;
    samples.push(((first - second) * 1000) / (bytes / pageBytes));
  }
  return Math.max(0, median(samples));
}

export async function measureHost(): Promise<HostFacts> {
  return {
    syscallMicros: syscallMicros(),
    roundTripMicros: await roundTrips(0, 300),
    roundTripAfterIdleMicros: await roundTrips(10, 60),
    pageFirstTouchMicros: pageFirstTouchMicros(),
  };
}

export function describeHost(facts: HostFacts): string {
  return (
    `host: a system call (fstat) ${fixed(facts.syscallMicros, 2)} µs; a message to another thread and back ${fixed(facts.roundTripMicros)} µs, ` +
    `${fixed(facts.roundTripAfterIdleMicros)} µs after 10 ms idle; the first write to a 4 KiB page ${fixed(facts.pageFirstTouchMicros, 2)} µs`
  );
}

if (process.argv[1] === import.meta.filename) console.log(describeHost(await measureHost()));
