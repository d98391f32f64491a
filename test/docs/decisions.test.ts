// The README's "Decisions where the specification is silent" and the OpenAPI description's list of
// the same name must name the same decisions: each bullet's bold key appears in both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { apiDescription } from '../../src/api/openapi-info.ts';

const readme = fs.readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
const heading = '## Decisions where the specification is silent';

function decisionKeys(text: string): string[] {
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `${heading} is missing`);
  const end = text.indexOf('\n## ', start + heading.length);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^- \*\*(.+?)\*\*/gm)].map((m) => m[1]!);
}

test('the README and the OpenAPI description list the same decisions, in the same order', () => {
  const inReadme = decisionKeys(readme);
  const inOpenApi = decisionKeys(apiDescription(loadConfig({})));
  assert.ok(inReadme.length >= 15, `found ${inReadme.length} decisions in the README`);
  assert.deepEqual(inOpenApi, inReadme);
});

test('both lists state the limits and codes a client acts on', () => {
  // Line breaks in the README are only wrapping.
  const flat = (text: string) => text.replace(/\s+/g, ' ');
  const [inReadme, description] = [flat(readme), flat(apiDescription(loadConfig({})))];
  for (const fact of ['1–128 characters', '64 KB', '413', '`result_not_found`', '16383', 'API access (403 `api_access_required`) → task (404)']) {
    assert.ok(inReadme.includes(fact), `README: ${fact}`);
    assert.ok(description.includes(fact), `OpenAPI: ${fact}`);
  }
});
