import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

interface OpenApiDoc {
  openapi: string;
  servers: { url: string }[];
  info: { version: string; description: string };
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject>; parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>;
  components: { schemas: Record<string, { properties?: Record<string, { format?: string }>; required?: string[] }> };
}

interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}

interface PropertySchema {
  type?: string | string[];
  format?: string;
  anyOf?: PropertySchema[];
  properties?: Record<string, PropertySchema>;
}

interface TaskSchema {
  properties: Record<'created_at' | 'updated_at', PropertySchema> & { output: { anyOf: PropertySchema[] } };
}

/** The string branch of a nullable string's schema, whichever way it is written, with its format. */
function nullableString(schema: PropertySchema): { format?: string } {
  const branches = schema.anyOf ?? [schema];
  const string = branches.find((b) => b.type === 'string' || (Array.isArray(b.type) && b.type.includes('string')));
  assert.ok(string, JSON.stringify(schema));
  assert.ok(branches.some((b) => b.type === 'null' || (Array.isArray(b.type) && b.type.includes('null'))), JSON.stringify(schema));
  return string.format === undefined ? {} : { format: string.format };
}

describeEachEngine('OpenAPI description', (engine) => {
  let server: TestServer;
  let doc: OpenApiDoc;
  before(async () => {
    server = await startTestServer({}, { engine });
    const res = await server.request('/api/v1/openapi.json');
    assert.equal(res.status, 200);
    doc = (await res.json()) as OpenApiDoc;
  });
  after(() => server.close());

  test('is a valid OpenAPI 3.1 document with version 1.0.0', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(validator.version, '3.1');
    assert.equal(doc.info.version, '1.0.0');
  });

  test('describes both endpoints with every error status of the specification', () => {
    const create = doc.paths['/bg/removals']?.post;
    const get = doc.paths['/bg/removals/{task_id}']?.get;
    assert.ok(create && get);
    // 415: a body in a Content-Encoding the API does not decode (README, Compressed request bodies).
    assert.deepEqual(Object.keys(create.responses).sort(), ['202', '400', '401', '402', '403', '409', '415', '429', '503']);
    assert.deepEqual(Object.keys(get.responses).sort(), ['200', '401', '403', '404', '429', '503']);
    assert.ok(create.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key'));
  });

  test("publishes the Idempotency-Key's limits, 1 to 128 characters, as the specification states them", () => {
    const key = doc.paths['/bg/removals']?.post?.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key') as { schema?: { minLength?: number; maxLength?: number } } | undefined;
    assert.equal(key?.schema?.minLength, 1);
    assert.equal(key?.schema?.maxLength, 128);
  });

  test('is generated from the validating schemas: the request and task shapes carry every spec field', () => {
    const schemas = doc.components.schemas;
    assert.deepEqual(Object.keys(schemas.CreateBgRemoval?.properties ?? {}).sort(), ['image_url', 'model', 'output_format', 'precision', 'subject']);
    assert.deepEqual(
      Object.keys(schemas.BgRemoval?.properties ?? {}).sort(),
      ['created_at', 'error', 'id', 'input', 'model', 'object', 'output', 'status', 'updated_at', 'usage'].sort(),
    );
    assert.ok(schemas.Error);
  });

  // A client generated from the description types a field by its format: without one, the
  // timestamps of a task were plain strings to it.
  test('publishes the timestamps of a task as date-time strings (or null)', () => {
    const task = doc.components.schemas.BgRemoval as TaskSchema;
    const output = task.properties.output.anyOf.find((s) => s.properties)!;
    for (const [name, schema] of [['created_at', task.properties.created_at], ['updated_at', task.properties.updated_at], ['output.expires_at', output.properties!.expires_at!]] as const) {
      assert.deepEqual(nullableString(schema), { format: 'date-time' }, name);
    }
  });

  test('publishes the result URL of a task as a URI (or null)', () => {
    const output = (doc.components.schemas.BgRemoval as TaskSchema).properties.output.anyOf.find((s) => s.properties)!;
    assert.deepEqual(nullableString(output.properties!.url!), { format: 'uri' });
  });

  test('publishes the request body as CreateBgRemoval, as a client sends it: only image_url is required', () => {
    const body = doc.paths['/bg/removals']?.post?.requestBody?.content['application/json']?.schema;
    assert.equal(body?.$ref, '#/components/schemas/CreateBgRemoval');
    assert.deepEqual(doc.components.schemas.CreateBgRemoval?.required, ['image_url']);
    assert.equal(doc.components.schemas.CreateBgRemoval?.properties?.image_url?.format, 'uri');
  });

  test('lets responses gain fields within v1, as its Compatibility decision says, while the request body stays closed', () => {
    // A client generated from a schema that forbids other properties refuses a response with an
    // added field, though the description tells clients to ignore unknown fields.
    const closed: string[] = [];
    const walk = (value: unknown, where: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${where}[${i}]`));
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'additionalProperties' && v === false) closed.push(where);
          walk(v, `${where}.${k}`);
        }
      }
    };
    for (const name of ['BgRemoval', 'BgRemovalError', 'Error']) walk(doc.components.schemas[name], name);
    assert.deepEqual(closed, []);
    assert.ok(doc.info.description.includes('fields may be added to responses within v1'));
    assert.equal((doc.components.schemas.CreateBgRemoval as { additionalProperties?: unknown }).additionalProperties, false);
  });

  test('publishes each schema once, and only those a path uses', () => {
    const names = Object.keys(doc.components.schemas);
    assert.deepEqual(names.filter((n) => n.endsWith('Input')), []);
    assert.deepEqual(names.sort(), ['BgRemoval', 'BgRemovalError', 'CreateBgRemoval', 'Error']);
    const text = JSON.stringify(doc);
    for (const ref of text.match(/#\/components\/schemas\/[A-Za-z]+/g) ?? []) {
      assert.ok(names.includes(ref.split('/').pop()!), `${ref} resolves`);
    }
  });

  test('describes every response, success included, with the headers it carries', () => {
    const create = doc.paths['/bg/removals']!.post!.responses;
    const get = doc.paths['/bg/removals/{task_id}']!.get!.responses;
    const download = doc.paths['/results/{key}']!.get!.responses;
    for (const response of [...Object.values(create), ...Object.values(get), ...Object.values(download)]) {
      assert.notEqual(response.description, 'Default Response');
      assert.ok(response.headers?.['X-Request-Id'], `${response.description} documents X-Request-Id`);
    }
    const rateHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    for (const [status, response] of [...Object.entries(create), ...Object.entries(get)]) {
      for (const h of rateHeaders) assert.equal(Boolean(response.headers?.[h]), status !== '401' && status !== '503', `${status} and ${h}`);
      assert.equal(Boolean(response.headers?.['Retry-After']), status === '429' || status === '503', `${status} and Retry-After`);
      assert.equal(Boolean(response.headers?.['WWW-Authenticate']), status === '401', `${status} and WWW-Authenticate`);
    }
    assert.ok(create['202']?.headers?.['Idempotent-Replayed']);
    assert.equal(get['200']?.headers?.['Idempotent-Replayed'], undefined);
    // The signed download takes no API key and is not counted.
    for (const response of Object.values(download)) assert.deepEqual(Object.keys(response.headers ?? {}), ['X-Request-Id']);
  });

  test('the documented headers are the ones the API sends', async () => {
    const { key } = await server.account();
    const documented = (path: string, method: string, status: number) =>
      Object.keys(doc.paths[path]![method]!.responses[String(status)]!.headers ?? {}).map((h) => h.toLowerCase()).sort();
    const sent = (res: Response) => {
      const names = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'idempotent-replayed', 'www-authenticate', 'accept-encoding'];
      return names.filter((h) => res.headers.has(h)).sort();
    };
    const create = (headers: Record<string, string> = {}) =>
      server.request('/api/v1/bg/removals', { method: 'POST', key, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ image_url: 'http://127.0.0.1:9/a.png' }) });

    const first = await create({ 'idempotency-key': 'openapi-headers' });
    assert.equal(first.status, 202);
    const replay = await create({ 'idempotency-key': 'openapi-headers' });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(sent(replay), documented('/bg/removals', 'post', 202));
    // Without a replay the optional header is simply absent.
    assert.deepEqual(sent(first), documented('/bg/removals', 'post', 202).filter((h) => h !== 'idempotent-replayed'));

    const invalid = await server.request('/api/v1/bg/removals', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(invalid.status, 400);
    assert.deepEqual(sent(invalid), documented('/bg/removals', 'post', 400));
    const undecodable = await create({ 'content-encoding': 'zstd' });
    assert.equal(undecodable.status, 415);
    assert.equal(((await undecodable.json()) as { error: { code: string } }).error.code, 'invalid_request');
    assert.deepEqual(sent(undecodable), documented('/bg/removals', 'post', 415));

    const task = (await first.json()) as { id: string };
    const found = await server.request(`/api/v1/bg/removals/${task.id}`, { key });
    assert.equal(found.status, 200);
    assert.deepEqual(sent(found), documented('/bg/removals/{task_id}', 'get', 200));
    const missing = await server.request('/api/v1/bg/removals/bgr_00000000000000000000', { key });
    assert.equal(missing.status, 404);
    assert.deepEqual(sent(missing), documented('/bg/removals/{task_id}', 'get', 404));
    const anonymous = await server.request(`/api/v1/bg/removals/${task.id}`);
    assert.equal(anonymous.status, 401);
    assert.deepEqual(sent(anonymous), documented('/bg/removals/{task_id}', 'get', 401));
    const unsigned = await server.request('/api/v1/results/bgr_00000000000000000000-1.png');
    assert.equal(unsigned.status, 403);
    assert.deepEqual(sent(unsigned), documented('/results/{key}', 'get', 403));
  });

  test('states the decisions taken where the specification is silent', () => {
    for (const topic of ['`hd`', 'canceled', 'Rate limit', 'Concurrency limit', 'Source images', 'Result URL lifetime', 'Idempotency keys', 'Ids and URLs that cannot name anything', 'Requests the HTTP parser refuses', 'Events']) {
      assert.ok(doc.info.description.includes(topic), `description mentions ${topic}`);
    }
  });

  test('publishes only the API: every path resolves to a route under its server URL /api/v1', () => {
    assert.deepEqual(doc.servers, [{ url: '/api/v1' }]);
    const published = Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    assert.deepEqual(published.sort(), ['GET /bg/removals/{task_id}', 'GET /results/{key}', 'POST /bg/removals']);
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const url = `/api/v1${path.replace(/\{([^}]+)\}/g, ':$1')}`;
        assert.ok(server.app.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method.toUpperCase()} ${url} is a route`);
      }
    }
  });

  test('declares the result download as the image it is, not JSON', () => {
    const ok = doc.paths['/results/{key}']?.get?.responses['200'] as { content?: Record<string, unknown> } | undefined;
    assert.deepEqual(Object.keys(ok?.content ?? {}).sort(), ['image/png', 'image/webp']);
  });

  test('readable docs are served at /docs', async () => {
    const res = await server.request('/docs/');
    assert.equal(res.status, 200);
    assert.match(await res.text(), /swagger/i);
  });
});
