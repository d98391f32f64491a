// Several processes of our side under different settings, run image by image in turn (side.ts,
// StepsJob): a load that changes during the run (a shared host) then slows each of them alike,
// where processes run one after another each get the load of their own minutes.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { BenchImage } from './images.ts';
import type { Sample, StepReply, StepRequest, StepsJob } from './side.ts';

export interface Setting {
  name: string;
  env: NodeJS.ProcessEnv;
  /** Flags for the child's Node. */
  nodeFlags?: string[];
  /** Another checkout of this repository (its own `node_modules` and kernels built) whose side.ts runs instead of this one's. */
  checkout?: string;
}

/** Whether the child has exited, by a code or by a signal (a crash leaves exitCode null). */
const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

function start(setting: Setting, images: BenchImage[]): { child: ChildProcess; next: () => Promise<StepReply> } {
  const side = setting.checkout ? path.resolve(setting.checkout, 'bench/side.ts') : new URL('./side.ts', import.meta.url);
  const child = fork(side, [JSON.stringify({ kind: 'steps', side: 'ours-standard', images } satisfies StepsJob)], {
    ...(setting.checkout && { cwd: path.resolve(setting.checkout) }),
    execArgv: [...(setting.nodeFlags ?? []), '--import', 'tsx'],
    stdio: 'inherit',
    env: setting.env,
  });
  const replies: StepReply[] = [];
  const waiting: { resolve: (reply: StepReply) => void; reject: (err: Error) => void }[] = [];
  child.on('message', (reply: StepReply) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(reply);
    else replies.push(reply);
  });
  child.on('exit', (code, signal) => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error(`${setting.name}: child exited with ${code ?? signal}`));
  });
  const next = () => {
    const reply = replies.shift();
    if (reply) return Promise.resolve(reply);
    if (exited(child)) return Promise.reject(new Error(`${setting.name}: child exited with ${child.exitCode ?? child.signalCode}`));
    return new Promise<StepReply>((resolve, reject) => waiting.push({ resolve, reject }));
  };
  return { child, next };
}

/**
 * Each image once in every setting, the settings taking turns to go first from one image to the
 * next; the samples of each setting, by name. A child is given each photo once and told which to
 * run at each step: onnxruntime overflowed its stack making a session in a process whose command
 * line held 15 KB or more (the job of `bench:turns --fixtures --runs 10`), and a checkout's older
 * side.ts runs the steps so as well. With `batch` above 1 each setting runs that many images in a
 * row, each told as soon as the last is done, as a worker with a queue takes its tasks, before the
 * next setting runs the same ones. How a process's images follow each other changes what its memory
 * costs (README, stop 56: the 12 MP photo's page faults in alternate turns and ten in a row).
 */
export async function steppedRuns(settings: Setting[], images: BenchImage[], batch = 1): Promise<Map<string, Sample[]>> {
  const photos = [...new Map(images.map((image) => [image.file, image])).values()];
  const indexOf = new Map(photos.map((photo, i) => [photo.file, i]));
  const children = settings.map((setting) => start(setting, photos));
  const samples = new Map(settings.map((s) => [s.name, [] as Sample[]]));
  try {
    for (const { next } of children) await next();
    for (let first = 0, turn = 0; first < images.length; first += batch, turn++) {
      for (let k = 0; k < children.length; k++) {
        const i = (turn + k) % children.length;
        const { child, next } = children[i]!;
        for (const image of images.slice(first, first + batch)) {
          child.send({ step: indexOf.get(image.file)! } satisfies StepRequest);
          const reply = await next();
          if (!('sample' in reply)) throw new Error(`${settings[i]!.name}: expected a sample`);
          samples.get(settings[i]!.name)!.push(reply.sample);
        }
      }
    }
  } finally {
    const exits = children.map(({ child }) => (exited(child) ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve))));
    for (const { child } of children) if (child.connected) child.send({ done: true } satisfies StepRequest);
    await Promise.all(exits);
  }
  return samples;
}
