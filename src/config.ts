// The environment is read here once, validated, and passed down; nothing else reads process.env.
import path from 'node:path';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

export const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CUTOUT_DATA_DIR: z.string().min(1).default('./data'),
  CUTOUT_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  CUTOUT_RATE_LIMIT_PER_MINUTE: int(1).default(120),
  CUTOUT_MAX_ACTIVE_TASKS: int(1).default(10),
  CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: bool.default(false),
  CUTOUT_RESULT_URL_TTL_SECONDS: int(1).default(3600),
  CUTOUT_RESULT_RETENTION_HOURS: z.coerce.number().positive().default(24),
  CUTOUT_IDEMPOTENCY_TTL_HOURS: z.coerce.number().min(24).default(24),
  CUTOUT_WORKER_CONCURRENCY: int(1, 64).default(1),
  CUTOUT_INFERENCE_THREADS: int(1, 256).optional(),
  CUTOUT_LEASE_SECONDS: int(5).default(60),
  CUTOUT_MAX_ATTEMPTS: int(1, 20).default(3),
  CUTOUT_FETCH_MAX_BYTES: int(1).default(25 * 1024 * 1024),
  CUTOUT_FETCH_TIMEOUT_SECONDS: int(1).default(30),
  CUTOUT_FETCH_MAX_REDIRECTS: int(0, 20).default(5),
  CUTOUT_MAX_PIXELS: int(1).default(50_000_000),
  CUTOUT_BOOTSTRAP: bool.default(true),
  CUTOUT_SIGNING_SECRET: z.string().min(32).optional(),
  CUTOUT_WEB_FREE_CREDITS: int(0).default(3),
  CUTOUT_WEB_SESSION_HOURS: z.coerce.number().positive().default(168),
  CUTOUT_WEB_SIGN_IN_MAX_FAILURES: int(1).default(5),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  logLevel: Env['LOG_LEVEL'];
  dataDir: string;
  /** Base of absolute URLs we hand out; when unset it is derived from the bound address at start. */
  publicUrl: string | undefined;
  rateLimitPerMinute: number;
  maxActiveTasks: number;
  allowPrivateImageUrls: boolean;
  resultUrlTtlSeconds: number;
  resultRetentionHours: number;
  idempotencyTtlHours: number;
  workerConcurrency: number;
  inferenceThreads: number | undefined;
  leaseMs: number;
  maxAttempts: number;
  fetch: { maxBytes: number; timeoutMs: number; maxRedirects: number };
  maxPixels: number;
  bootstrap: boolean;
  signingSecret: string | undefined;
  web: { freeCredits: number; sessionTtlMs: number; signInMaxFailures: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(present[String(i.path[0])])})`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    dataDir: path.resolve(e.CUTOUT_DATA_DIR),
    publicUrl: e.CUTOUT_PUBLIC_URL?.replace(/\/+$/, ''),
    rateLimitPerMinute: e.CUTOUT_RATE_LIMIT_PER_MINUTE,
    maxActiveTasks: e.CUTOUT_MAX_ACTIVE_TASKS,
    allowPrivateImageUrls: e.CUTOUT_ALLOW_PRIVATE_IMAGE_URLS,
    resultUrlTtlSeconds: e.CUTOUT_RESULT_URL_TTL_SECONDS,
    resultRetentionHours: e.CUTOUT_RESULT_RETENTION_HOURS,
    idempotencyTtlHours: e.CUTOUT_IDEMPOTENCY_TTL_HOURS,
    workerConcurrency: e.CUTOUT_WORKER_CONCURRENCY,
    inferenceThreads: e.CUTOUT_INFERENCE_THREADS,
    leaseMs: e.CUTOUT_LEASE_SECONDS * 1000,
    maxAttempts: e.CUTOUT_MAX_ATTEMPTS,
    fetch: {
      maxBytes: e.CUTOUT_FETCH_MAX_BYTES,
      timeoutMs: e.CUTOUT_FETCH_TIMEOUT_SECONDS * 1000,
      maxRedirects: e.CUTOUT_FETCH_MAX_REDIRECTS,
    },
    maxPixels: e.CUTOUT_MAX_PIXELS,
    bootstrap: e.CUTOUT_BOOTSTRAP,
    signingSecret: e.CUTOUT_SIGNING_SECRET,
    web: {
      freeCredits: e.CUTOUT_WEB_FREE_CREDITS,
      sessionTtlMs: e.CUTOUT_WEB_SESSION_HOURS * 3_600_000,
      signInMaxFailures: e.CUTOUT_WEB_SIGN_IN_MAX_FAILURES,
    },
  };
}
