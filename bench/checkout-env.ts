// The environment a process of a checkout starts with: that checkout's own allocator settings
// (its src/allocator-env.ts), which are part of what a comparison of two checkouts compares.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { withAllocatorEnv } from '../src/allocator-env.ts';

const allocatorModule = z.object({ withAllocatorEnv: z.function({ input: [z.custom<NodeJS.ProcessEnv>()], output: z.custom<NodeJS.ProcessEnv>() }) });

/** `env` with the allocator settings of `checkout` (this one's where it is unset or has no such module). */
export async function withCheckoutAllocatorEnv(env: NodeJS.ProcessEnv, checkout?: string): Promise<NodeJS.ProcessEnv> {
  const file = checkout && path.resolve(checkout, 'src/allocator-env.ts');
  if (!file || !fs.existsSync(file)) return withAllocatorEnv(env);
  return allocatorModule.parse(await import(pathToFileURL(file).href)).withAllocatorEnv(env);
}
