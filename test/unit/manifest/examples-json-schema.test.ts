/**
 * The shipped examples (config-examples/edges and config-examples/endpoints) against the
 * committed JSON Schema (schema/edgesync.schema.json), with Ajv, the validator editors'
 * yaml-language-server uses: every document is valid, so an editor pointed at the schema (each
 * example's first line) shows no false error; and a document broken in a known way is refused,
 * so the check can fail.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const repo = path.resolve(import.meta.dirname, '../../..');
const schema = JSON.parse(readFileSync(path.join(repo, 'schema/edgesync.schema.json'), 'utf8'));
/** Strict: a keyword or format the validator does not know fails the compile. */
const ajv = new Ajv2020({ allErrors: true, strict: true });
// A CommonJS module: its plugin is `default` on the module object.
ajvFormats.default(ajv);
const validate = ajv.compile(schema);

/** Every YAML file under `dir`, relative to the repository. */
function yamlFiles(dir: string): string[] {
  return readdirSync(path.join(repo, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(dir, f))
    .sort();
}

const files = [...yamlFiles('config-examples/edges'), ...yamlFiles('config-examples/endpoints')];
const documents = files.flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(repo, file), 'utf8')).map((doc, i) => ({
    where: `${file} #${i + 1}`,
    value: doc.toJS() as Record<string, unknown>,
  })),
);

describe('config-examples against the JSON Schema', () => {
  it('finds the examples of both folders', () => {
    expect(files).toContain('config-examples/endpoints/portal.yaml');
    expect(files).toContain('config-examples/edges/storefront.yaml');
    expect(documents.length).toBeGreaterThan(files.length);
  });

  it.each(documents.map((d) => [d.where, d.value] as const))('%s is valid', (_where, value) => {
    const ok = validate(value);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it.each([
    ['an unknown field', (d: Record<string, unknown>) => ({ ...d, colour: 'blue' })],
    ['a wrong type', (d: Record<string, unknown>) => ({ ...d, name: 42 })],
    ['an unknown kind', (d: Record<string, unknown>) => ({ ...d, kind: 'CloudEdge' })],
  ])('a document with %s is refused', (_what, broken) => {
    for (const file of [
      'config-examples/endpoints/portal.yaml',
      'config-examples/edges/bots.yaml',
    ]) {
      const doc = documents.find((d) => d.where.startsWith(file));
      expect(doc).toBeDefined();
      expect(validate(broken(doc?.value ?? {}))).toBe(false);
    }
  });
});
