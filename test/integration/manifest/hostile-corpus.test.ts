/**
 * A generated corpus of hostile manifest directories (issue 9): malformed YAML, alias tricks,
 * tags, encodings, sizes, nesting, wrong types in every field, rule violations, and file-system
 * traps. Each case runs `edgesync apply --yes` in-process against its own local server over HTTP
 * and must end in either a clear located error (`file:line:col: ...`, exit 1, zero writes counted
 * at the server) or a legitimately valid set (exit 0). Never a crash, an internal error or a
 * write from an invalid set; every case within the per-case time bound.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir } from '../apply/helpers.js';

type Entry = string | Uint8Array | { readonly link: string } | { readonly fifo: true };

interface Case {
  readonly name: string;
  readonly files: Readonly<Record<string, Entry>>;
}

const tls = (extra = '') => `kind: TLSEdge\nname: t\nhostports: [t.example.com:443]\n${extra}`;
const route = (extra: string) =>
  `kind: HTTPSEdge\nname: h\nhostports: [h.example.com:443]\nroutes:\n  - match_type: path_prefix\n    match: /\n${extra}`;

function syntaxCases(): Case[] {
  const texts: [string, string][] = [
    ['unclosed flow sequence', 'kind: TLSEdge\nname: x\nhostports: [a.example.com:443\n'],
    ['unclosed flow mapping', 'kind: TLSEdge\nname: x\nbackend: { backend_id: bkdhr_1\n'],
    ['unterminated double quote', 'kind: TLSEdge\nname: "x\n'],
    ['unterminated single quote', "kind: TLSEdge\nname: 'x\n"],
    ['bad indentation', 'kind: TLSEdge\n  name: x\n hostports: []\n'],
    ['tab indentation', 'kind: TLSEdge\nbackend:\n\tbackend_id: bkdhr_1\n'],
    ['a key with no value and a colon', 'kind: TLSEdge\nname: : x\n'],
    ['a lone dash', '-\n'],
    ['a lone brace', '{\n'],
    ['a closing bracket', ']\n'],
    ['an unknown directive', '%YAML 9.9\n---\nkind: TLSEdge\nname: x\n'],
    ['a TAG directive', '%TAG !e! tag:example.com,2000:\n---\nkind: !e!edge TLSEdge\nname: x\n'],
    ['a binary tag', 'kind: TLSEdge\nname: x\ndescription: !!binary aGVsbG8=\n'],
    ['a custom tag', 'kind: TLSEdge\nname: x\ndescription: !secret abc\n'],
    ['a language tag', 'kind: TLSEdge\nname: x\ndescription: !!python/object:os.system ls\n'],
    ['a recursive list alias', 'kind: HTTPSEdge\nname: x\nhostports: &h [*h]\n'],
    ['a recursive map alias', 'kind: TLSEdge\nname: x\nmetadata: &m { a: *m }\n'],
    ['a recursive merge', 'kind: TLSEdge\nname: x\nmetadata: &m\n  <<: *m\n'],
    ['an undefined alias', 'kind: TLSEdge\nname: x\ndescription: *nope\n'],
    ['a merge of a scalar', 'kind: TLSEdge\nname: x\nmetadata:\n  <<: 3\n'],
    [
      'an alias bomb',
      `kind: TLSEdge\nname: x\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`).join('\n')}\ndescription: *a8\n`,
    ],
    ['a duplicate top-level key', 'kind: TLSEdge\nname: x\nname: y\n'],
    [
      'a duplicate nested key',
      'kind: TLSEdge\nname: x\nbackend: { backend_id: bkdhr_1, backend_id: bkdhr_2 }\n',
    ],
    [
      'deep flow nesting',
      `kind: TLSEdge\nname: x\ndescription: ${'['.repeat(2000)}${']'.repeat(2000)}\n`,
    ],
    [
      'deep block nesting',
      `kind: TLSEdge\nname: x\nmetadata:\n${Array.from({ length: 300 }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} v\n`,
    ],
    ['a huge line', `kind: TLSEdge\nname: x\ndescription: ${'y'.repeat(200_000)}\n`],
    ['a __proto__ key', 'kind: TLSEdge\nname: x\n__proto__: { polluted: true }\n'],
    [
      'a nested __proto__ key',
      'kind: TLSEdge\nname: x\nmetadata: { __proto__: { polluted: "yes" } }\n',
    ],
    ['a constructor key', 'kind: TLSEdge\nname: x\nconstructor: { prototype: {} }\n'],
    ['a number as a name', 'kind: TLSEdge\nname: 12\n'],
    ['a scalar document', 'just a string\n'],
    ['a list document', '- kind: TLSEdge\n  name: x\n'],
    [
      'a null document among others',
      'kind: TLSEdge\nname: x\n---\n~\n---\nkind: BotUser\nname: b\n',
    ],
    ['documents with a stray document end', 'kind: TLSEdge\nname: x\n...\nkind: BotUser\n'],
    ['control characters in a value', 'kind: TLSEdge\nname: x\ndescription: "a\\x1b[2Jb\\u0007"\n'],
    ['a bidi override in a name', 'kind: TLSEdge\nname: "x\u202eevil"\n'],
    ['an anchor on the document', '&doc\nkind: TLSEdge\nname: x\n'],
    ['a very long key', `kind: TLSEdge\nname: x\n${'k'.repeat(5000)}: 1\n`],
    ['a complex key', 'kind: TLSEdge\nname: x\n? [a, b]\n: c\n'],
    [
      'a timestamp where a string goes',
      'kind: TLSEdge\nname: x\ndescription: 2001-12-14t21:59:43.10-05:00\n',
    ],
    [
      'an octal-looking version',
      'kind: TLSEdge\nname: x\ntls_termination: { min_version: 1.20 }\n',
    ],
  ];
  const cases: Case[] = texts.map(([name, text]) => ({ name, files: { 'a.yaml': text } }));
  cases.push(
    { name: 'NUL bytes', files: { 'a.yaml': new Uint8Array([107, 105, 110, 100, 58, 0, 0, 10]) } },
    {
      name: 'invalid UTF-8',
      files: { 'a.yaml': new Uint8Array([0x6b, 0x3a, 0x20, 0xc3, 0x28, 0x0a]) },
    },
    {
      name: 'a UTF-16 byte order mark',
      files: { 'a.yaml': new Uint8Array([0xff, 0xfe, 0x6b, 0x00, 0x3a, 0x00]) },
    },
    { name: 'a UTF-8 byte order mark (valid)', files: { 'a.yaml': `\ufeff${tls()}` } },
    { name: 'CRLF line endings (valid)', files: { 'a.yaml': tls().replaceAll('\n', '\r\n') } },
    {
      name: 'a file over the size cap',
      files: { 'a.yaml': `${tls()}# ${'x'.repeat(1_100_000)}\n` },
    },
    { name: 'an empty file (valid)', files: { 'a.yaml': '' } },
    { name: 'only comments (valid)', files: { 'a.yaml': '# nothing here\n' } },
  );
  return cases;
}

/** Wrong types in every field: each field gets values of every other JSON type. */
function typeCases(): Case[] {
  const wrong = ['42', 'true', '[1, 2]', '{ a: 1 }', 'null', '""', '-1', '1.5e308'];
  const fields: [string, (v: string) => string][] = [
    ['kind', (v) => `kind: ${v}\nname: x\n`],
    ['name', (v) => `kind: TLSEdge\nname: ${v}\n`],
    ['description', (v) => tls(`description: ${v}\n`)],
    ['metadata', (v) => tls(`metadata: ${v}\n`)],
    ['hostports', (v) => `kind: TLSEdge\nname: t\nhostports: ${v}\n`],
    ['protect', (v) => tls(`protect: ${v}\n`)],
    ['backend', (v) => tls(`backend: ${v}\n`)],
    ['tls_termination.min_version', (v) => tls(`tls_termination: { min_version: ${v} }\n`)],
    ['routes', (v) => `kind: HTTPSEdge\nname: h\nroutes: ${v}\n`],
    [
      'route.match',
      (v) => `kind: HTTPSEdge\nname: h\nroutes:\n  - { match_type: path_prefix, match: ${v} }\n`,
    ],
    [
      'circuit_breaker.num_buckets',
      (v) =>
        route(
          `    circuit_breaker: { tripped_duration: 1, rolling_window: 1, volume_threshold: 1, num_buckets: ${v} }\n`,
        ),
    ],
    ['request_headers.add', (v) => route(`    request_headers: { add: ${v} }\n`)],
    ['oauth.provider', (v) => route(`    oauth: { provider: ${v} }\n`)],
    ['user_agent_filter.deny', (v) => route(`    user_agent_filter: { deny: ${v} }\n`)],
    ['BotUser.active', (v) => `kind: BotUser\nname: b\nactive: ${v}\n`],
  ];
  const cases: Case[] = [];
  for (const [field, make] of fields) {
    for (const v of wrong) cases.push({ name: `${field}: ${v}`, files: { 'a.yaml': make(v) } });
  }
  return cases;
}

/** The hosted service's rules and the spec's limits, broken one at a time. */
function ruleCases(): Case[] {
  const list: [string, string][] = [
    ['a domain on port 5432', 'kind: TLSEdge\nname: x\nhostports: [db.example.com:5432]\n'],
    ['port 0', 'kind: TLSEdge\nname: x\nhostports: [10.0.0.1:0]\n'],
    ['a hostport without a port', 'kind: TLSEdge\nname: x\nhostports: [db.example.com]\n'],
    [
      'mutual_tls under upstream',
      'kind: TLSEdge\nname: x\ntls_termination: { terminate_at: upstream }\nmutual_tls: { certificate_authority_ids: [ca_1] }\n',
    ],
    [
      'two auth routes',
      'kind: HTTPSEdge\nname: h\nroutes:\n  - { match_type: path_prefix, match: /a, oauth: { provider: { google: {} } } }\n  - { match_type: path_prefix, match: /b, saml: { idp_metadata: "<x/>" } }\n',
    ],
    [
      'a cookie prefix with a dash',
      route('    oauth: { provider: { google: {} }, cookie_prefix: a-b }\n'),
    ],
    ['a partial circuit breaker', route('    circuit_breaker: { num_buckets: 3 }\n')],
    ['CRLF in a header value', route('    request_headers: { add: { X-A: "a\\r\\nb" } }\n')],
    ['a lookahead user-agent pattern', route('    user_agent_filter: { deny: ["(?=a)b"] }\n')],
    [
      'an unknown webhook provider',
      route('    webhook_verification: { provider: hosted_hooks, secret: s }\n'),
    ],
    ['a description over 255 bytes', tls(`description: ${'é'.repeat(128)}\n`)],
    ['metadata over 4096 bytes', tls(`metadata: { big: ${'x'.repeat(4100)} }\n`)],
    ['a reserved label', tls('metadata: { edgesync/owner: me }\n')],
    ['an unknown field', tls('hostport: []\n')],
    ['an ID with the wrong prefix', tls('id: edghts_1\n')],
    ['a duplicate name across files', tls()],
    ['an env reference to nothing', tls('description: { env: NOPE_NOT_SET }\n')],
    ['a file reference outside the tree', tls('description: { file: /etc/hostname }\n')],
    ['a file reference to a missing file', tls('description: { file: missing.txt }\n')],
  ];
  const cases: Case[] = list.map(([name, text]) => ({ name, files: { 'a.yaml': text } }));
  const dup = cases.find((c) => c.name === 'a duplicate name across files') as Case;
  (dup.files as Record<string, Entry>)['b.yaml'] = tls().replace('t.example.com', 'u.example.com');
  return cases;
}

function fileSystemCases(): Case[] {
  return [
    {
      name: 'a dangling link to a directory',
      files: { 'a.yaml': tls(), team: { link: '../nowhere' } },
    },
    {
      name: 'a dangling link to a file',
      files: { 'a.yaml': tls(), 'b.yaml': { link: 'missing.yaml' } },
    },
    { name: 'a link escaping the tree', files: { 'a.yaml': tls(), up: { link: '..' } } },
    { name: 'a link to the root', files: { 'a.yaml': tls(), r: { link: '/' } } },
    { name: 'a symlink loop', files: { 'a.yaml': tls(), x: { link: 'y' }, y: { link: 'x' } } },
    { name: 'a FIFO named like a manifest', files: { 'a.yaml': tls(), 'p.yaml': { fifo: true } } },
    { name: 'an escape sequence in a file name', files: { 'e\u001b[2J.yaml': 'kind: Nope\n' } },
    { name: 'a newline in a file name', files: { 'a\n/etc/x.yaml:1:1: ok.yaml': 'kind: Nope\n' } },
    { name: 'an upper-case extension (valid)', files: { 'A.YAML': tls() } },
    {
      name: 'a manifest in a hidden directory (ignored, valid)',
      files: { '.git/x.yaml': 'not: [valid' },
    },
  ];
}

const CASES: Case[] = [...syntaxCases(), ...typeCases(), ...ruleCases(), ...fileSystemCases()];

async function materialize(dir: string, files: Readonly<Record<string, Entry>>): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [rel, entry] of Object.entries(files)) {
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    if (typeof entry === 'string' || entry instanceof Uint8Array) await writeFile(file, entry);
    else if ('link' in entry) await symlink(entry.link, file);
    else execFileSync('mkfifo', [file]);
  }
}

const LOCATED = /^.+:\d+:\d+: /m;
const outcomes = { invalid: 0, valid: 0 };

describe(`hostile manifest corpus (${CASES.length} generated cases)`, () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir('edgesync-hostile-');
  });
  afterAll(async () => {
    await tmp.cleanup();
  });

  it('has at least 150 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
  });

  it.each(CASES.map((c, i) => [i, c.name, c] as const))(
    '%i: %s',
    async (i, _name, c) => {
      const dir = path.join(tmp.dir, `case-${i}`);
      await materialize(dir, c.files);
      const server = await startTestServer();
      try {
        const run = await runCli(['apply', '--yes', dir], {
          env: apiEnv(server.url, server.apiKey),
        });
        expect(run.stderr).not.toMatch(/internal error|RangeError|TypeError|\n\s+at /);
        // Cases marked valid must be; the rest may be valid only where the value is legitimate.
        if (c.name.includes('(valid')) expect(run.code, run.stderr).toBe(0);
        if (run.code === 0) {
          outcomes.valid += 1;
          return;
        }
        outcomes.invalid += 1;
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toMatch(LOCATED);
        expect(writesAt(server)).toBe(0);
      } finally {
        await server.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
    10_000,
  );

  it('reports its figures', () => {
    // Every case ran (the per-case test above); most are refused, a few are valid on purpose.
    expect(outcomes.invalid + outcomes.valid).toBe(CASES.length);
    expect(outcomes.valid).toBeGreaterThan(0);
    expect(outcomes.invalid).toBeGreaterThan(outcomes.valid);
  });
});
