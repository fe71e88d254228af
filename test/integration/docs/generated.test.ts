/**
 * The generated documents (the CLI flags and manifest fields references, the README's command
 * table) must be what the code generates now: a flag or field added without `npm run docs`
 * fails here, as schema/edgesync.schema.json does against `edgesync schema`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, '../../..');
let out: string;

beforeAll(async () => {
  assertFreshBuild();
  out = await mkdtemp(path.join(tmpdir(), 'edgesync-docs-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('generated docs', () => {
  it('are identical to what scripts/docs.mjs generates from the code (npm run docs)', async () => {
    const { stdout } = await run(process.execPath, ['scripts/docs.mjs', '--out', out], {
      cwd: repo,
    });
    const files = JSON.parse(stdout) as string[];
    expect(files).toEqual([
      'docs/reference/cli-flags.md',
      'docs/reference/manifest-fields.md',
      'README.md',
      'docs/reference/manifests.md',
    ]);
    for (const file of files) {
      const generated = await readFile(path.join(out, file), 'utf8');
      const committed = await readFile(path.join(repo, file), 'utf8');
      // Regenerate with: npm run docs
      expect(committed, `${file} differs from the generated one: run npm run docs`).toBe(generated);
    }
  });

  it('document every flag of every command and every field of every kind', async () => {
    const { commands } = await import('../../../src/cli/commands.js');
    const flags = await readFile(path.join(repo, 'docs/reference/cli-flags.md'), 'utf8');
    for (const [name, load] of Object.entries(commands)) {
      const mod = await load();
      expect(flags).toContain(`## edgesync ${name}\n`);
      for (const flag of Object.keys(mod.OPTIONS)) expect(flags).toMatch(`| \`--${flag}`);
    }
    const fields = await readFile(path.join(repo, 'docs/reference/manifest-fields.md'), 'utf8');
    for (const row of [
      '| `routes[].circuit_breaker.num_buckets` | integer |',
      '| `suspend` | boolean |',
      '| `traffic_policy` | object or string | yes |',
      `| \`server_private_key\` | string | secret (always masked); \${...} in the value |`,
      '| `bucket_key` | list of string | required; CEL expression |',
    ])
      expect(fields).toContain(row);
    expect(fields).toContain('true: edgesync leaves this resource exactly as it is live');
    const { ACTION_TYPES } = await import('../../../src/hosted/policy-actions.js');
    const manifests = await readFile(path.join(repo, 'docs/reference/manifests.md'), 'utf8');
    for (const type of ACTION_TYPES) {
      expect(fields).toContain(`### ${type}\n`);
      expect(manifests).toContain(`\`${type}\``);
    }
  });
});
