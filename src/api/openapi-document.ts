// How the published OpenAPI document is made from the route schemas: fastify-type-provider-zod
// converts them, and the two functions here add what the schemas cannot say (the response headers
// the API sends) and publish each schema once, under the name the routes give it.
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { apiCodings } from './plugins/content-coding.ts';

interface HeaderSchema {
  type: 'string' | 'integer';
  description: string;
}

const requestIdHeader: Record<string, HeaderSchema> = {
  'X-Request-Id': { type: 'string', description: 'Unique id of this request (`req_…`); an Error body repeats it as `request_id`.' },
};

// Sent by the API-key check (src/api/plugins/authenticate.ts) once the key is known, so on every
// answer of a route that takes an API key except a 401, and a 503, which may come before the key
// could be looked up.
const rateLimitHeaders: Record<string, HeaderSchema> = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests allowed per minute for this API key.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current one-minute window.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix time in seconds when the current window ends.' },
};

const retryAfterHeader: Record<string, HeaderSchema> = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again (until the rate-limit window ends, or 5 for `concurrency_limit` and `service_unavailable`).' },
};

const challengeHeader: Record<string, HeaderSchema> = {
  'WWW-Authenticate': {
    type: 'string',
    description: 'The scheme to authenticate with: `Bearer realm="api"`, with `error="invalid_token"` added when a bearer key was sent and refused (RFC 6750).',
  },
};

const acceptEncodingHeader: Record<string, HeaderSchema> = {
  'Accept-Encoding': { type: 'string', description: `The codings a request body may be sent in: \`${apiCodings.join(', ')}\` (RFC 9110 §15.5.16).` },
};

const replayedHeader: Record<string, HeaderSchema> = {
  'Idempotent-Replayed': { type: 'string', description: '`true` when this answer replays the task an earlier request with the same `Idempotency-Key` created; absent otherwise.' },
};

interface TransformedSchema {
  security?: unknown[];
  headers?: { properties?: Record<string, unknown> };
  response?: Record<string, { headers?: Record<string, HeaderSchema> }>;
}

/** The route transform: the Zod schemas converted, then the response headers of each status. */
export const transformRoute: SwaggerTransform = (route) => {
  const result = jsonSchemaTransform(route);
  const schema = result.schema as TransformedSchema;
  const takesApiKey = (schema.security?.length ?? 0) > 0;
  const takesIdempotencyKey = Object.keys(schema.headers?.properties ?? {}).some((h) => h.toLowerCase() === 'idempotency-key');
  for (const [status, response] of Object.entries(schema.response ?? {})) {
    response.headers = {
      ...response.headers,
      ...requestIdHeader,
      ...(takesApiKey && status !== '401' && status !== '503' ? rateLimitHeaders : {}),
      ...(status === '429' || status === '503' ? retryAfterHeader : {}),
      ...(takesApiKey && status === '401' ? challengeHeader : {}),
      ...(status === '415' ? acceptEncodingHeader : {}),
      ...(takesIdempotencyKey && status === '202' ? replayedHeader : {}),
    };
  }
  return result;
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const componentPrefix = '#/components/schemas/';

function collectRefs(value: Json, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(componentPrefix)) into.add(v.slice(componentPrefix.length));
      else collectRefs(v, into);
    }
  }
}

function renameRefs(value: Json, names: Map<string, string>): Json {
  if (Array.isArray(value)) return value.map((v) => renameRefs(v, names));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(componentPrefix)) {
        const name = v.slice(componentPrefix.length);
        return [k, componentPrefix + (names.get(name) ?? name)];
      }
      return [k, renameRefs(v, names)];
    }),
  );
}

/**
 * The document transform. The Zod converter publishes every named schema twice, as parsed
 * (`<name>Input`: defaults make fields optional) and as written (`<name>`), whether a route uses
 * it or not. Here only the schemas the paths reach are kept, and a schema used only as parsed (the
 * request body) keeps its own name: `CreateBgRemoval` is the body a client sends, with only
 * `image_url` required.
 */
export const publishComponents: SwaggerTransformObject = (documentObject) => {
  const doc = jsonSchemaTransformObject(documentObject) as { paths?: Json; components?: { schemas?: Record<string, Json> } & Record<string, Json> };
  const schemas = doc.components?.schemas ?? {};
  const reached = new Set<string>();
  collectRefs(doc.paths ?? {}, reached);
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of [...reached]) {
      const before = reached.size;
      collectRefs(schemas[name] ?? null, reached);
      if (reached.size > before) grew = true;
    }
  }
  const names = new Map<string, string>();
  for (const name of reached) {
    const base = name.replace(/Input$/, '');
    if (base !== name && !reached.has(base)) names.set(name, base);
  }
  const published = Object.fromEntries([...reached].sort().map((name) => [names.get(name) ?? name, renameRefs(schemas[name] ?? null, names)]));
  return {
    ...doc,
    paths: renameRefs(doc.paths ?? {}, names),
    components: { ...doc.components, schemas: published },
  } as ReturnType<SwaggerTransformObject>;
};

/** Paths are published relative to the server entry `/api/v1`, as the specification writes them. */
export function openApiDocument(app: FastifyInstance): unknown {
  const doc = app.swagger() as { paths?: Record<string, unknown> };
  const paths = Object.fromEntries(Object.entries(doc.paths ?? {}).map(([p, v]) => [p.replace(/^\/api\/v1/, ''), v]));
  return { ...doc, paths };
}
