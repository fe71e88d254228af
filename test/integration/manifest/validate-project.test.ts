/**
 * `edgesync validate` as a project uses it: without the secrets (a CI job on a pull request from
 * a fork), in a directory holding `node_modules`, and on the files an editor or a pre-commit
 * hook names. In-process through `main`, on the real file system.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { Capture } from '../../helpers/capture.js';

const repo = path.resolve(import.meta.dirname, '../../..');

async function cli(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main({ argv, stdout, stderr, env, cwd, signal: new AbortController().signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-validate-project-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const edge = (name: string, extra = '') =>
  `kind: HTTPSEdge\nname: ${name}\nhostports: [${name}.example.com:443]\nroutes:\n  - match_type: path_prefix\n    match: /\n${extra}`;

describe('validate without secret values', () => {
  it('config-examples/endpoints is valid with no environment, and says what was left for later', async () => {
    const r = await cli(['validate', 'config-examples/endpoints'], repo);
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr: [
        'portal.yaml:29:28: note: traffic_policy.on_http_request[1].actions[0].config.client_secret: { env: PORTAL_GOOGLE_CLIENT_SECRET } is not set here: its value is checked by plan, apply, run',
        '2 manifests valid (0 TLS edges, 0 HTTPS edges with 0 routes, 0 bot users, 2 cloud endpoints) in 2 files; 1 reference left for later (its value is checked by plan, apply, run)',
        '',
      ].join('\n'),
    });
  });

  it('a required field, a listed value and a missing file are left for later; the rest is checked', async () => {
    await writeFile(
      path.join(dir, 'a.yaml'),
      [
        'kind: HTTPSEdge',
        'name: shop',
        'hostports: [{ env: SHOP_HOSTPORT }]',
        'routes:',
        '  - match_type: path_prefix',
        '    match: { env: SHOP_MATCH }',
        '    webhook_verification: { provider: stripe, secret: { file: mounted/stripe } }',
        '  - match_type: path_prefix',
        '    match: /',
        '    circuit_breaker: { error_threshold: 2 }',
        '',
      ].join('\n'),
    );
    const r = await cli(['validate', '.', '-o', 'json'], dir);
    const report = JSON.parse(r.stdout);
    expect(
      report.deferred.map((d: { path: string; reference: string }) => [d.path, d.reference]),
    ).toEqual([
      ['hostports[0]', 'env SHOP_HOSTPORT'],
      ['routes[0].match', 'env SHOP_MATCH'],
      ['routes[0].webhook_verification.secret', 'file mounted/stripe'],
    ]);
    // The checks that need no value still run: a bound on another route's field.
    expect(report.valid).toBe(false);
    expect(report.diagnostics.map((d: { path: string }) => d.path)).toEqual([
      'routes[1].circuit_breaker',
    ]);
    expect(report.resources.routes).toBe(2);
  });

  it('a reference is still checked for its form, and a value that is there is checked', async () => {
    await writeFile(
      path.join(dir, 'a.yaml'),
      'kind: TLSEdge\nname: a\nhostports: [{ env: "" }]\n---\nkind: TLSEdge\nname: b\nhostports: [{ env: B, file: x }]\n---\nkind: TLSEdge\nname: c\nhostports: [{ env: C }]\n',
    );
    const r = await cli(['validate', '.'], dir, { C: 'no port here' });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('a.yaml:3:20: hostports[0]: "env" must be a non-empty string');
    expect(lines[1]).toBe(
      'a.yaml:7:13: hostports[0]: a reference takes exactly one of "env" or "file"',
    );
    expect(lines[2]).toMatch(/^a\.yaml:11:13: hostports\[0\]: /);
    expect(lines).toHaveLength(4);
  });

  it('plan, apply and run still need the value: the loader without deferral says which is missing', async () => {
    const result = await loadManifests(path.join(repo, 'config-examples/endpoints'), { env: {} });
    expect(result.ok).toBe(false);
    expect(result.deferred).toEqual([]);
  });
});

describe('what a project looks like', () => {
  it('node_modules is skipped (a package of the project may ship any YAML)', async () => {
    await writeFile(path.join(dir, 'shop.yaml'), edge('shop'));
    await mkdir(path.join(dir, 'node_modules', 'some-package'), { recursive: true });
    await writeFile(path.join(dir, 'node_modules', 'some-package', 'action.yml'), 'on: push\n');
    const r = await cli(['validate'], dir);
    expect(r.stderr).toBe(
      '1 manifest valid (0 TLS edges, 1 HTTPS edge with 1 route, 0 bot users) in 1 file\n',
    );
    expect(r.code).toBe(0);
    const help = await cli(['validate', '--help'], dir);
    expect(help.stdout).toContain('names starting with "." and node_modules are skipped');
  });

  it('reads only the files named, relative to their common directory, with the rules across them', async () => {
    await mkdir(path.join(dir, 'edges', 'team'), { recursive: true });
    await writeFile(path.join(dir, 'edges', 'a.yaml'), edge('a'));
    await writeFile(path.join(dir, 'edges', 'team', 'b.yaml'), edge('a'));
    await writeFile(path.join(dir, 'edges', 'broken.yaml'), 'kind: Nope\n');
    const one = await cli(['validate', 'edges/a.yaml'], dir);
    expect(one.code).toBe(0);
    expect(one.stderr).toContain('1 manifest valid');
    const two = await cli(['validate', 'edges/a.yaml', 'edges/team/b.yaml'], dir);
    expect(two.code).toBe(1);
    // Both places of the conflict, as in a whole directory; broken.yaml was not named.
    expect(two.stderr).toContain('team/b.yaml:2:7: name: ');
    expect(two.stderr).toContain('a.yaml:2:7');
    expect(two.stderr).not.toContain('broken.yaml');
    const missing = await cli(['validate', 'edges/a.yaml', 'edges/nope.yaml'], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nope.yaml:1:1: no such file');
    const mixed = await cli(['validate', 'edges', 'edges/a.yaml'], dir);
    expect(mixed.code).toBe(64);
    expect(mixed.stderr).toContain('edges is a directory: give one DIR, or files only');
  });
});
