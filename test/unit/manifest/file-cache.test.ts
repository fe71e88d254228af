/**
 * `FileCache` (issue 12): the daemon keeps each file's shape phase between cycles. An unchanged
 * file gives the same objects (the planner's memo keys on them); a changed, removed or
 * reference-reading file is built afresh; the result always equals a build without the cache.
 */
import { describe, expect, it, vi } from 'vitest';
import { buildDesiredSet, FileCache } from '../../../src/manifest/build.js';
import { memoryReader } from './helpers.js';

/** Every text `yaml` parses in these tests, in order: no file may be parsed twice. */
const parses: string[] = vi.hoisted(() => []);
vi.mock('../../../src/manifest/yaml.js', async (original) => {
  const real = await original<typeof import('../../../src/manifest/yaml.js')>();
  return {
    ...real,
    eachYamlDocument: (...args: Parameters<typeof real.eachYamlDocument>) => {
      parses.push(args[0]);
      return real.eachYamlDocument(...args);
    },
  };
});

const encoder = new TextEncoder();
const tls = (name: string, extra = '') =>
  `kind: TLSEdge\nname: ${name}\nhostports: [${name}.example.com:443]\n${extra}`;

function build(
  files: Record<string, string>,
  cache: FileCache | undefined,
  env: Record<string, string> = {},
) {
  return buildDesiredSet(
    Object.entries(files).map(([file, text]) => ({ file, bytes: encoder.encode(text) })),
    { reader: memoryReader({ env }), ...(cache === undefined ? {} : { cache }) },
  );
}

function set(result: ReturnType<typeof build>) {
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.set;
}

describe('FileCache', () => {
  it('hands back the same resources for unchanged files and builds changed ones afresh', () => {
    const cache = new FileCache();
    const files = { 'a.yaml': tls('a'), 'b.yaml': tls('b') };
    const first = set(build(files, cache));
    const second = set(build({ ...files, 'b.yaml': tls('b', 'description: edited\n') }, cache));
    expect(second.tlsEdges[0]).toBe(first.tlsEdges[0]);
    expect(second.tlsEdges[1]).not.toBe(first.tlsEdges[1]);
    expect(second.tlsEdges[1]?.description).toBe('edited');
    // Equal to a build without the cache, field for field.
    expect(second).toEqual(
      set(build({ ...files, 'b.yaml': tls('b', 'description: edited\n') }, undefined)),
    );
  });

  it('hands back the same set when no file changed since (a file read again as it was)', () => {
    const cache = new FileCache();
    const files = { 'a.yaml': tls('a'), 'b.yaml': tls('b') };
    const first = set(build(files, cache));
    expect(set(build({ ...files }, cache))).toBe(first);
    const edited = set(build({ ...files, 'b.yaml': tls('b', 'description: edited\n') }, cache));
    expect(edited).not.toBe(first);
    expect(edited.tlsEdges[1]?.description).toBe('edited');
  });

  it('forgets removed files', () => {
    const cache = new FileCache();
    build({ 'a.yaml': tls('a'), 'b.yaml': tls('b') }, cache);
    expect(cache.size).toBe(2);
    const after = set(build({ 'a.yaml': tls('a') }, cache));
    expect(after.tlsEdges.map((e) => e.name)).toEqual(['a']);
    expect(cache.size).toBe(1);
  });

  it('does not keep a file that reads env: a changed value is read again', () => {
    const cache = new FileCache();
    const files = { 'a.yaml': tls('a', 'description: { env: DESC }\n') };
    expect(set(build(files, cache, { DESC: 'one' })).tlsEdges[0]?.description).toBe('one');
    expect(cache.size).toBe(0);
    expect(set(build(files, cache, { DESC: 'two' })).tlsEdges[0]?.description).toBe('two');
  });

  it('keeps a file whose secrets are written inline (a policy secret), and still masks them', () => {
    const cache = new FileCache();
    const endpoint = `kind: CloudEndpoint
name: hooks
url: https://hooks.example.com
traffic_policy:
  on_http_request:
    - actions:
        - type: verify-webhook
          config: { provider: github, secret: inline-secret-value }
        - type: deny
`;
    const first = set(build({ 'a.yaml': endpoint }, cache));
    expect(cache.size).toBe(1);
    const second = set(build({ 'a.yaml': endpoint }, cache));
    expect(second.cloudEndpoints[0]).toBe(first.cloudEndpoints[0]);
    expect(second.cloudEndpoints[0]?.sensitive).toEqual([
      ['traffic_policy', 'on_http_request', 0, 'actions', 0, 'config', 'secret'],
    ]);
  });

  it('does not keep a file with diagnostics: the same text reports them again', () => {
    const cache = new FileCache();
    const files = { 'a.yaml': tls('a', 'colour: blue\n') };
    const first = build(files, cache);
    const second = build(files, cache);
    expect(first.ok).toBe(false);
    expect(second.diagnostics).toEqual(first.diagnostics);
    expect(cache.size).toBe(0);
  });

  it('still runs the whole-set rules: a name duplicated across a kept and a new file fails', () => {
    const cache = new FileCache();
    build({ 'a.yaml': tls('a') }, cache);
    const result = build(
      { 'a.yaml': tls('a'), 'b.yaml': tls('a').replace('a.example', 'x.example') },
      cache,
    );
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => d.message).join('\n')).toMatch(/duplicate|already/i);
  });

  it('reports a problem on a kept document at the same place as a build without the cache', () => {
    const cache = new FileCache();
    const kept = `# comment\n${tls('other')}---\n${tls('b', 'description: kept\n')}`;
    build({ 'b.yaml': kept }, cache);
    // a.yaml sorts first: the duplicate is reported on the kept document in b.yaml.
    const files = { 'a.yaml': tls('b').replace('b.example', 'a.example'), 'b.yaml': kept };
    const warm = build(files, cache);
    const cold = build(files, undefined);
    expect(warm.ok).toBe(false);
    expect(warm.diagnostics).toEqual(cold.diagnostics);
    expect(warm.diagnostics[0]).toMatchObject({ file: 'b.yaml', line: 7 });
  });

  describe('locating errors parses no file twice', () => {
    // Every name and hostport repeated in a backup copy: each document of both files has errors.
    const many = Array.from({ length: 30 }, (_, i) => tls(`e${i}`, 'id: edgtls_1\n')).join('---\n');
    const both = { 'a.yaml': many, 'backup/a.yaml': many };

    it('once per file per build, with or without a cache, at the places a cold build names', () => {
      parses.length = 0;
      const cold = build(both, undefined);
      // The adopted ID repeated by 29 documents of a.yaml, then the backup's 30 names, 30
      // hostports and 30 IDs: every one located.
      expect(cold.diagnostics).toHaveLength(29 + 90);
      expect(cold.diagnostics[0]).toMatchObject({ file: 'a.yaml', line: 9, column: 5, path: 'id' });
      expect(cold.diagnostics.at(-1)).toMatchObject({ file: 'backup/a.yaml', line: 149 });
      expect(parses).toHaveLength(2);
      const cache = new FileCache();
      build({ 'a.yaml': many.replaceAll('id: edgtls_1\n', '') }, cache);
      parses.length = 0;
      const warm = build(
        { 'a.yaml': many.replaceAll('id: edgtls_1\n', ''), 'b.yaml': many },
        cache,
      );
      expect(parses).toEqual([many]);
      expect(warm.diagnostics).toEqual(
        build({ 'a.yaml': many.replaceAll('id: edgtls_1\n', ''), 'b.yaml': many }, undefined)
          .diagnostics,
      );
    });

    it("reports a document's own rules (anywhere in it) without its file parsed again", () => {
      const own = tls('x', 'metadata: { edgesync/owner: me }\n');
      parses.length = 0;
      const result = build(
        { 'a.yaml': own, 'b.yaml': tls('x').replace('x.example', 'y.ex') },
        undefined,
      );
      expect(parses).toHaveLength(2);
      expect(result.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}: ${d.path}`)).toEqual([
        'a.yaml:4:13: metadata',
        'b.yaml:2:7: name',
      ]);
    });
  });

  it('gives routes the positions of a build without the cache', () => {
    const cache = new FileCache();
    const https = [
      'kind: HTTPSEdge',
      'name: web',
      'hostports: [web.example.com:443]',
      'routes:',
      '  - match_type: path_prefix',
      '    match: /',
      '    backend: { backend_id: bkdhr_1 }',
      '  - match_type: path_prefix',
      '    match: /api',
      '    backend: { backend_id: bkdhr_2 }',
      '',
    ].join('\n');
    build({ 'a.yaml': https }, cache);
    const warm = set(build({ 'a.yaml': https }, cache));
    expect(warm.httpsEdges[0]?.routes.map((r) => r.source)).toEqual(
      set(build({ 'a.yaml': https }, undefined)).httpsEdges[0]?.routes.map((r) => r.source),
    );
  });
});
