import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, type TestServer } from '../support/server.ts';
import { describeEachEngine } from '../support/engines.ts';

interface OpenApiDoc {
  openapi: string;
  servers: { url: string }[];
  info: { version: string; description: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string; in: string }[] }>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
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
    assert.deepEqual(Object.keys(create.responses).sort(), ['202', '400', '401', '402', '403', '409', '429']);
    assert.deepEqual(Object.keys(get.responses).sort(), ['200', '401', '403', '404', '429']);
    assert.ok(create.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key'));
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
