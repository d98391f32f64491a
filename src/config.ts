// The environment is read here once, validated, and passed down; nothing else reads process.env.
import path from 'node:path';
import { z } from 'zod';
import { hoursToMs } from './domain/durations.ts';
import { trustedProxiesSchema } from './trusted-proxies.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER, why?: string) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .max(max, `must be at most ${max}${why ? ` (${why})` : ''}`);
/** Hours as a number (fractions allowed), bounded so that a time this far ahead is still a date. */
const hours = (min: number, exclusive = false) =>
  (exclusive ? z.coerce.number().positive() : z.coerce.number().min(min)).max(maxHours, `must be at most ${maxHours} (10 years)`);
const maxHours = 87_600;

// Result and upload URLs are this base with a path appended, and the API publishes them as URIs.
// So it is an absolute http(s) URI in RFC 3986's characters (valid percent-escapes included)
// with no user name (it would be handed to every client), query or fragment (either would
// swallow the path appended to it). The WHATWG parse of z.url alone let all of those through.
// The host has no percent-escapes: curl and Python look a host up as written, so a non-ASCII
// one goes out in its IDNA (xn--) form, as RFC 3986 §3.2.2 advises.
const uriBase = /^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=-]+)(?::\d*)?(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?$/i;
const publicUrl = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/ }))
  .refine(
    (url) => uriBase.test(url) && !/%(?![0-9A-Fa-f]{2})/.test(url),
    'must be an http(s) URL without user name, query or fragment, written in the characters of RFC 3986 (percent-encode others in the path; a host name that is not ASCII in its xn-- form)',
  );

/** Counts that PostgreSQL compares with integer columns and parameters. */
const maxInt32 = 2_147_483_647;
/** S3 presigned URLs live at most 7 days; disk results are held to the same bound. */
export const maxResultUrlTtlSeconds = 604_800;

export const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CUTOUT_DATA_DIR: z.string().min(1).default('./data'),
  CUTOUT_PUBLIC_URL: publicUrl.optional(),
  CUTOUT_TRUSTED_PROXIES: trustedProxiesSchema.optional(),
  CUTOUT_RATE_LIMIT_PER_MINUTE: int(1, maxInt32).default(120),
  CUTOUT_MAX_ACTIVE_TASKS: int(1, maxInt32).default(10),
  CUTOUT_ALLOW_PRIVATE_IMAGE_URLS: bool.default(false),
  CUTOUT_RESULT_URL_TTL_SECONDS: int(1, maxResultUrlTtlSeconds, '7 days, the longest an S3 presigned URL lives').default(3600),
  CUTOUT_RESULT_RETENTION_HOURS: hours(0, true).default(24),
  CUTOUT_IDEMPOTENCY_TTL_HOURS: hours(24).default(24),
  CUTOUT_WORKER_CONCURRENCY: int(1, 64).default(1),
  CUTOUT_INFERENCE_THREADS: int(1, 256).optional(),
  CUTOUT_LEASE_SECONDS: int(5, 86_400, 'one day').default(60),
  CUTOUT_MAX_ATTEMPTS: int(1, 20).default(3),
  CUTOUT_FETCH_MAX_BYTES: int(1, 1024 ** 3, '1 GiB').default(25 * 1024 * 1024),
  CUTOUT_FETCH_TIMEOUT_SECONDS: int(1, 3600, 'one hour').default(30),
  CUTOUT_FETCH_MAX_REDIRECTS: int(0, 20).default(5),
  CUTOUT_MAX_PIXELS: int(1, maxInt32).default(50_000_000),
  CUTOUT_BOOTSTRAP: bool.default(true),
  CUTOUT_SIGNING_SECRET: z.string().min(32).optional(),
  CUTOUT_WEB_FREE_CREDITS: int(0, maxInt32, 'the most credits an account holds').default(3),
  CUTOUT_WEB_SESSION_HOURS: z.coerce.number().positive().max(maxHours, `at most ${maxHours} hours (10 years): a longer session has no cookie expiry date`).default(168),
  CUTOUT_WEB_SIGN_IN_MAX_FAILURES: int(1, 1_000_000).default(5),
  // Ten lets the people behind one office's shared address sign up in the same hour (a team's
  // start, a retried form), while a script there gets at most ten accounts' free credits an hour.
  CUTOUT_WEB_SIGN_UPS_PER_HOUR: int(1, 1_000_000).default(10),
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL; percent-encode any / ? # @ or : in the user name or password' })
    .optional(),
  CUTOUT_DATABASE_POOL_SIZE: int(1, 1000).default(10),
  CUTOUT_DATABASE_QUERY_TIMEOUT_SECONDS: int(1, 3600).default(30),
  CUTOUT_WORKER_POLL_MS: int(10, 60_000).default(1000),
  CUTOUT_SHUTDOWN_GRACE_SECONDS: int(0, 3600).default(30),
  // Node's own default, which Fastify turns off: room for the largest web upload (25 MB) at about
  // 700 kbit/s, while a client that sends its body a byte at a time cannot hold a connection forever.
  CUTOUT_REQUEST_TIMEOUT_SECONDS: int(1, 3600, 'one hour').default(300),
  CUTOUT_METRICS_PORT: int(0, 65535).default(9464),
  // Long enough that it cannot be guessed one scrape at a time, and made of the characters a bearer
  // token may have (RFC 6750), so that one read from a file with its newline still matches.
  CUTOUT_METRICS_TOKEN: z
    .string()
    .trim()
    .min(16)
    .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'letters, digits and - . _ ~ + / only (a bearer token), no spaces')
    .optional(),
  CUTOUT_S3_BUCKET: z.string().min(3).optional(),
  CUTOUT_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  CUTOUT_S3_REGION: z.string().min(1).optional(),
  CUTOUT_S3_PREFIX: z.string().regex(/^[A-Za-z0-9!_.*'()/-]*$/).default(''),
  CUTOUT_S3_FORCE_PATH_STYLE: bool.optional(),
  CUTOUT_S3_TIMEOUT_SECONDS: int(1, 3600, 'one hour').default(30),
  AWS_REGION: z.string().min(1).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  logLevel: Env['LOG_LEVEL'];
  dataDir: string;
  /** Base of absolute URLs we hand out; when unset it is derived from the bound address at start. */
  publicUrl: string | undefined;
  /** Unset: the client is the TCP peer, and X-Forwarded-* headers are not read. */
  trustedProxies: Env['CUTOUT_TRUSTED_PROXIES'];
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
  web: { freeCredits: number; sessionTtlMs: number; signInMaxFailures: number; signUpsPerHour: number };
  /** postgres://… when the store is PostgreSQL; undefined for the SQLite file in dataDir. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** How long one PostgreSQL statement may take, on the server and on the wire. */
  databaseQueryTimeoutMs: number;
  workerPollMs: number;
  shutdownGraceMs: number;
  /** How long one request, its body included, may take to arrive. */
  requestTimeoutMs: number;
  /** The worker process's health and metrics port. */
  metricsPort: number;
  /** Unset: /metrics is open, as Prometheus expects by default. */
  metricsToken: string | undefined;
  /** Results go to this bucket when set, else to dataDir/results. */
  s3: S3Config | undefined;
}

export interface S3Config {
  bucket: string;
  endpoint: string | undefined;
  region: string;
  prefix: string;
  forcePathStyle: boolean;
  /** How long a connection may take to open, and a request may go without a byte, before it fails. */
  timeoutMs: number;
  /** Unset means the SDK's default chain (instance or task role, shared config files). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined } | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Variables whose values never appear in a message. */
const secretVariables = new Set(['CUTOUT_SIGNING_SECRET', 'CUTOUT_METRICS_TOKEN', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']);

/**
 * How a refused value is shown: secrets not at all, a URL without its password. A URL is often
 * refused because its password holds an unencoded / ? or #, so the password is taken to run to the
 * last @, wherever a parser would end it; a password= query parameter is hidden too.
 */
export function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return 'unset';
  if (secretVariables.has(name)) return `a value of ${value.length} characters, not shown`;
  return JSON.stringify(value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:?#]*):.*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***'));
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty or blank is unset, for every variable (PORT=' ' is the default port, not port 0).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0]);
      return `  ${i.path.join('.')}: ${i.message} (got ${shownValue(name, present[name])})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    dataDir: path.resolve(e.CUTOUT_DATA_DIR),
    publicUrl: e.CUTOUT_PUBLIC_URL?.replace(/\/+$/, ''),
    trustedProxies: e.CUTOUT_TRUSTED_PROXIES,
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
      sessionTtlMs: hoursToMs(e.CUTOUT_WEB_SESSION_HOURS),
      signInMaxFailures: e.CUTOUT_WEB_SIGN_IN_MAX_FAILURES,
      signUpsPerHour: e.CUTOUT_WEB_SIGN_UPS_PER_HOUR,
    },
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.CUTOUT_DATABASE_POOL_SIZE,
    databaseQueryTimeoutMs: e.CUTOUT_DATABASE_QUERY_TIMEOUT_SECONDS * 1000,
    workerPollMs: e.CUTOUT_WORKER_POLL_MS,
    shutdownGraceMs: e.CUTOUT_SHUTDOWN_GRACE_SECONDS * 1000,
    requestTimeoutMs: e.CUTOUT_REQUEST_TIMEOUT_SECONDS * 1000,
    metricsPort: e.CUTOUT_METRICS_PORT,
    metricsToken: e.CUTOUT_METRICS_TOKEN,
    s3: e.CUTOUT_S3_BUCKET === undefined ? undefined : s3Config(e, e.CUTOUT_S3_BUCKET),
  };
}

function s3Config(e: Env, bucket: string): S3Config {
  if ((e.AWS_ACCESS_KEY_ID === undefined) !== (e.AWS_SECRET_ACCESS_KEY === undefined)) {
    throw new ConfigError('Invalid configuration:\n  AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  }
  return {
    bucket,
    endpoint: e.CUTOUT_S3_ENDPOINT,
    region: e.CUTOUT_S3_REGION ?? e.AWS_REGION ?? 'us-east-1',
    prefix: e.CUTOUT_S3_PREFIX,
    // MinIO and most S3-compatible servers want bucket-in-path addressing; AWS wants virtual hosts.
    forcePathStyle: e.CUTOUT_S3_FORCE_PATH_STYLE ?? e.CUTOUT_S3_ENDPOINT !== undefined,
    timeoutMs: e.CUTOUT_S3_TIMEOUT_SECONDS * 1000,
    credentials:
      e.AWS_ACCESS_KEY_ID !== undefined && e.AWS_SECRET_ACCESS_KEY !== undefined
        ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, sessionToken: e.AWS_SESSION_TOKEN }
        : undefined,
  };
}
