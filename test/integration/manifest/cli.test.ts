/**
 * `edgesync validate` and `edgesync schema`, run in-process through `main` (the real command
 * table) against manifests on the real file system; and the committed JSON Schema kept identical
 * to the generated one.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { manifestJsonSchemaText } from '../../../src/manifest/jsonschema.js';

const repo = path.resolve(import.meta.dirname, '../../..');

async function cli(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c: Buffer) => out.push(c.toString()));
  stderr.on('data', (c: Buffer) => err.push(c.toString()));
  const code = await main({ argv, stdout, stderr, env, cwd, signal: new AbortController().signal });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-validate-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('edgesync validate', () => {
  it('exits 0 with a summary on stderr for the examples', async () => {
    const r = await cli(['validate', 'config-examples/edges'], repo);
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr:
        '9 manifests valid (2 TLS edges, 4 HTTPS edges with 10 routes, 3 bot users) in 4 files\n',
    });
  });

  it('exits 1 and lists every diagnostic', async () => {
    await writeFile(
      path.join(dir, 'shop.yaml'),
      'kind: HTTPSEdge\nname: shop\nroutes:\n  - match_type: path_prefix\n    match: /\n    oauth:\n      provider: {}\n',
    );
    await writeFile(path.join(dir, 'bad.yml'), 'kind: TLSEdge\nname: x\nhostport: [a:1]\n');
    const r = await cli(['validate', dir], '/');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        'bad.yml:3:1: unknown field "hostport"; did you mean "hostports"?',
        'shop.yaml:7:17: routes[0].oauth.provider: exactly one provider must be set (one of github, facebook, microsoft, google, linkedin, gitlab, twitch, amazon)',
        '2 errors in 2 files: the manifests are invalid',
        '',
      ].join('\n'),
    );
  });

  it('--output json prints the versioned report on stdout', async () => {
    await writeFile(
      path.join(dir, 'a.yaml'),
      'kind: TLSEdge\nname: x\ndescription: { env: DESC }\n---\nkind: BotUser\nname: B\n',
    );
    const r = await cli(['validate', '--output', 'json', '.'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      format_version: 1,
      valid: false,
      diagnostics: [
        {
          file: 'a.yaml',
          line: 6,
          column: 7,
          path: 'name',
          message:
            'names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
          severity: 'error',
        },
      ],
      resources: {
        files: 1,
        documents: 2,
        tls_edges: 1,
        https_edges: 0,
        routes: 0,
        bot_users: 1,
        cloud_endpoints: 0,
      },
      deferred: [
        {
          file: 'a.yaml',
          line: 3,
          column: 14,
          path: 'description',
          reference: 'env DESC',
          checked_by: ['plan', 'apply', 'run'],
        },
      ],
    });
  });

  it('reads { env } from the command environment and --owner counts towards metadata', async () => {
    await writeFile(
      path.join(dir, 'a.yaml'),
      `kind: TLSEdge\nname: x\ndescription: { env: DESC }\nmetadata: { notes: ${'n'.repeat(4030)} }\n`,
    );
    const ok = await cli(['validate', dir, '--output=json'], '/', { DESC: 'hello' });
    expect(JSON.parse(ok.stdout).valid).toBe(true);
    const owned = await cli(['validate', dir, '--owner', 'platform-team-eu'], '/', {
      DESC: 'hello',
    });
    expect(owned.code).toBe(1);
    expect(owned.stderr).toContain('stored metadata would be 4098 bytes');
  });

  it('a missing directory is an error (exit 1), never an empty set', async () => {
    const r = await cli(['validate', path.join(dir, 'nope')], '/');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `edgesync validate: manifest directory ${path.join(dir, 'nope')} does not exist: desired state unknown\n`,
    );
  });

  it.each([
    [['validate', '--output', 'yaml']],
    [['validate', '--nope']],
    [['validate', '.', 'a.yaml']],
    [['schema', 'extra']],
  ])('usage errors exit 64: %j', async (argv) => {
    const r = await cli(argv, dir);
    expect(r.code).toBe(64);
    expect(r.stdout).toBe('');
  });

  it("help COMMAND shows the command's help; a mistyped command gets a suggestion", async () => {
    const help = await cli(['help', 'plan'], dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: edgesync plan');
    expect(help.stderr).toBe('');
    const typo = await cli(['plna'], dir);
    expect(typo.code).toBe(64);
    expect(typo.stderr).toContain('did you mean "plan"?');
  });

  it.each([
    [['run', '--intervl', '1s'], '--interval'],
    [['server', '--prot', '0'], '--port'],
    [['plan', '--max-delete', '3'], '--max-deletes'],
    [['apply', '--concurency', '2'], '--concurrency'],
  ])('a mistyped flag is one line and a pointer to --help: %j', async (argv, suggested) => {
    const r = await cli(argv, dir);
    const [command, given] = argv;
    expect(r.code).toBe(64);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `edgesync ${command}: Unknown option '${given}'; did you mean ${suggested}?\n` +
        `Run "edgesync ${command} --help" for its options.\n`,
    );
  });

  it('help goes to stdout; a bare `edgesync`, a usage error, prints it on stderr', async () => {
    for (const argv of [['--help'], ['help'], ['plan', '--help'], ['schema', '-h']]) {
      const r = await cli(argv, dir);
      expect(r.code, argv.join(' ')).toBe(0);
      expect(r.stdout, argv.join(' ')).toMatch(/^usage: edgesync/);
      expect(r.stderr, argv.join(' ')).toBe('');
    }
    const bare = await cli([], dir);
    expect(bare).toMatchObject({ code: 64, stdout: '' });
    expect(bare.stderr).toMatch(/^usage: edgesync/);
  });

  it('a short flag means the same long flag in every command', async () => {
    const { commands } = await import('../../../src/cli/commands.js');
    const meaning = new Map<string, string>();
    for (const [name, load] of Object.entries(commands)) {
      for (const [long, option] of Object.entries((await load()).OPTIONS)) {
        if (option.short === undefined) continue;
        const seen = meaning.get(option.short);
        expect(
          seen === undefined || seen === long,
          `${name}: -${option.short} is --${long}, elsewhere --${seen}`,
        ).toBe(true);
        meaning.set(option.short, long);
      }
    }
    expect(meaning.get('o')).toBe('output');
  });
});

describe('edgesync schema', () => {
  it('prints the JSON Schema, identical to the committed schema/edgesync.schema.json', async () => {
    const r = await cli(['schema'], repo);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(manifestJsonSchemaText());
    const committed = await readFile(path.join(repo, 'schema/edgesync.schema.json'), 'utf8');
    // Regenerate with: npm run build && node bin/edgesync.js schema > schema/edgesync.schema.json
    expect(committed).toBe(r.stdout);
  });

  it('describes one document as a union on kind, with secret references', () => {
    const schema = JSON.parse(manifestJsonSchemaText());
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe('urn:edgesync:schema:manifest:1');
    expect(
      schema.oneOf.map((o: { properties: { kind: { const: string } } }) => o.properties.kind.const),
    ).toEqual(
      expect.arrayContaining([
        'TLSEdge',
        'HTTPSEdge',
        'ServiceUser',
        'BotUser',
        'CloudEndpoint',
        'ReservedDomain',
        'IPPolicy',
        'CertificateAuthority',
      ]),
    );
    expect(schema.$defs.SecretRef.anyOf).toHaveLength(2);
    const https = schema.oneOf[1];
    expect(https.additionalProperties).toBe(false);
    expect(https.properties.tls_termination.properties).not.toHaveProperty('terminate_at');
    const route = https.properties.routes.items;
    const cb = route.properties.circuit_breaker.properties;
    expect(cb.num_buckets.maximum).toBe(128);
    expect(cb.error_threshold_percentage).toMatchObject({ minimum: 0, maximum: 1 });
    expect(
      route.properties.oauth.properties.provider.properties.google.properties.client_secret
        .anyOf[1],
    ).toEqual({
      $ref: '#/$defs/SecretRef',
    });
  });
});
