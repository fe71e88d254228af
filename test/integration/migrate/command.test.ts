/**
 * `edgesync migrate`, run in-process through `main` on the real file system: file for file
 * output, the source directory untouched, references kept, nothing written on an error or an
 * unacknowledged loss, and the same bytes from a second run.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli } from '../apply/helpers.js';

const WEB = 'bkdhr_2OOHLE6ESrthOmxYlInonfwYtzS';
const DB = 'bkdhr_2OOHLE6ESrthOmxYlInonfwYtzT';
const SECRET = 'hunter2-very-secret-value';

let root: string;
let dir: string;
let out: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'edgesync-migrate-'));
  dir = path.join(root, 'edges');
  out = path.join(root, 'migrated');
  await mkdir(path.join(dir, 'team'), { recursive: true });
  await writeFile(
    path.join(dir, 'shop.yaml'),
    `kind: HTTPSEdge
name: shop
description: Shop
metadata: { team: web }
hostports: [shop.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: ${WEB} }
    request_headers: { add: { X-Key: { env: UPSTREAM_KEY } } }
    oauth:
      provider:
        google: { client_id: id.apps, client_secret: { env: UPSTREAM_KEY }, email_domains: [example.com] }
---
kind: BotUser
name: deployer
`,
  );
  await writeFile(path.join(dir, 'team', 'bots.yaml'), 'kind: BotUser\nname: ci\nactive: false\n');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tree(base: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(base, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(base, full)] = await readFile(full, 'utf8');
  }
  return files;
}

const digest = async (base: string) =>
  createHash('sha256')
    .update(JSON.stringify(await tree(base)))
    .digest('hex');

function migrate(...extra: string[]) {
  return runCli(
    ['migrate', dir, '--out', out, '--backend', `${WEB}=https://web.internal`, ...extra],
    {
      env: { UPSTREAM_KEY: SECRET },
    },
  );
}

describe('edgesync migrate', () => {
  it('writes endpoints and bot users file for file, keeps references, leaves DIR alone, and is repeatable', async () => {
    const before = await digest(dir);
    const first = await migrate();
    expect(first.stderr).toContain(
      '1 cloud endpoint(s) from 1 edge(s), 2 other document(s) copied',
    );
    expect(first.code).toBe(0);
    expect(await digest(dir)).toBe(before);
    const files = await tree(out);
    expect(Object.keys(files).sort()).toEqual(['shop.yaml', path.join('team', 'bots.yaml')].sort());
    expect(JSON.stringify(files)).not.toContain(SECRET);
    const docs = parseAllDocuments(files['shop.yaml']!).map((d) => d.toJS());
    // The reservation its host needs comes first.
    expect(docs.map((d) => d.kind)).toEqual(['ReservedDomain', 'CloudEndpoint', 'BotUser']);
    expect(docs[1]).toMatchObject({
      name: 'shop',
      url: 'https://shop.example.com',
      description: 'Shop',
      metadata: { team: 'web' },
    });
    const actions = docs[1].traffic_policy.on_http_request.flatMap(
      (r: { actions: unknown[] }) => r.actions,
    );
    expect(actions).toContainEqual({
      type: 'add-headers',
      config: { headers: { 'x-key': { env: 'UPSTREAM_KEY' } } },
    });
    expect(actions).toContainEqual(
      expect.objectContaining({
        type: 'oauth',
        config: expect.objectContaining({ client_secret: { env: 'UPSTREAM_KEY' } }),
      }),
    );
    expect(files[path.join('team', 'bots.yaml')]).toContain('name: ci\nactive: false\n');

    const again = await migrate();
    expect(again.code).toBe(0);
    expect(await tree(out)).toEqual(files);
  });

  it('an error stops everything: nothing written, the source field located', async () => {
    await writeFile(
      path.join(dir, 'team', 'db.yaml'),
      'kind: TLSEdge\nname: db\nhostports: [192.0.2.10:5432]\n',
    );
    const r = await migrate();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('team/db.yaml:3:');
    expect(r.stderr).toContain('hostports[0]');
    expect(r.stderr).toContain('nothing written');
    await expect(readdir(out)).rejects.toThrow();
  });

  it('a backend without a mapping is an error naming it', async () => {
    const r = await runCli(['migrate', dir, '--out', out], { env: { UPSTREAM_KEY: SECRET } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no internal URL for backend ${WEB}`);
  });

  it('a warning stops the migration until --allow-lossy, which writes the acknowledgement beside the endpoint', async () => {
    const text = (await readFile(path.join(dir, 'shop.yaml'), 'utf8')).replace(
      '    match: /\n',
      '    match: /\n    description: everything\n',
    );
    await writeFile(path.join(dir, 'shop.yaml'), text);
    const refused = await migrate();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('shop.yaml:9:18: warning: routes[0].description');
    expect(refused.stderr).toContain('--allow-lossy');
    await expect(readdir(out)).rejects.toThrow();

    const accepted = await migrate('--allow-lossy');
    expect(accepted.code).toBe(0);
    const written = await readFile(path.join(out, 'shop.yaml'), 'utf8');
    expect(written).toContain('# Lossy translation, acknowledged with --allow-lossy:');
    expect(written).toContain('shop.yaml:9:18: warning: routes[0].description');
  });

  it("a route's match or an edge's name read from env is an error at its field; the value is printed nowhere", async () => {
    const text = (await readFile(path.join(dir, 'shop.yaml'), 'utf8'))
      .replace('name: shop\n', 'name: { env: EDGE_NAME }\n')
      .replace('    match: /\n', '    match: { env: ROUTE_PATH }\n');
    await writeFile(path.join(dir, 'shop.yaml'), text);
    const r = await runCli(
      ['migrate', dir, '--out', out, '--backend', `${WEB}=https://web.internal`, '--allow-lossy'],
      { env: { UPSTREAM_KEY: SECRET, EDGE_NAME: 'hidden-edge-name', ROUTE_PATH: '/hidden-path' } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('shop.yaml:2:7: name: a value read from env or file');
    expect(r.stderr).toContain('shop.yaml:8:12: routes[0].match: a value read from env or file');
    expect(r.stderr).not.toContain('hidden-');
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });

  it('--allow-lossy never turns an error into a warning: an error beside a warning writes nothing', async () => {
    await writeFile(
      path.join(dir, 'team', 'db.yaml'),
      'kind: TLSEdge\nname: db\nhostports: [192.0.2.10:5432]\n---\nkind: HTTPSEdge\nname: idle\nhostports: []\n',
    );
    const r = await migrate('--allow-lossy');
    expect(r.stderr).toContain('team/db.yaml:5:1: warning: the edge has no hostports');
    expect(r.stderr).toContain('team/db.yaml:3:');
    expect(r.stderr).toContain('1 error(s): nothing written');
    expect(r.code).toBe(1);
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });

  it('an edge without hostports has no endpoint to carry its warning: --allow-lossy acknowledges it at the top of the file', async () => {
    await writeFile(
      path.join(dir, 'team', 'idle.yaml'),
      'kind: HTTPSEdge\nname: idle\nhostports: []\n',
    );
    const refused = await migrate();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('team/idle.yaml:1:1: warning: the edge has no hostports');
    const accepted = await migrate('--allow-lossy');
    expect(accepted.code).toBe(0);
    const written = await readFile(path.join(out, 'team', 'idle.yaml'), 'utf8');
    expect(written).toContain('# Lossy translation, acknowledged with --allow-lossy:');
    expect(written).toContain(
      '# - team/idle.yaml:1:1: warning: the edge has no hostports: no endpoint is written for it',
    );
    expect(parseAllDocuments(written).map((d) => d.toJS())).toEqual([]);
  });

  it('a file of bot users only is copied byte for byte; bot users beside an edge keep their comments', async () => {
    const bots =
      '# yaml-language-server: $schema=../../schema/edgesync.schema.json\n# The CI robots.\nkind: BotUser\nname: ci   # the runner\nactive: false\n---\n# deploys\nkind: BotUser\nname: cd\n';
    await writeFile(path.join(dir, 'team', 'bots.yaml'), bots);
    const shop = (await readFile(path.join(dir, 'shop.yaml'), 'utf8')).replace(
      '---\nkind: BotUser\nname: deployer\n',
      '---\n# The deployer.\nkind: BotUser\nname: deployer # pushes releases\n',
    );
    await writeFile(path.join(dir, 'shop.yaml'), shop);
    const r = await migrate();
    expect(r.code).toBe(0);
    expect(await readFile(path.join(out, 'team', 'bots.yaml'), 'utf8')).toBe(bots);
    const mixed = await readFile(path.join(out, 'shop.yaml'), 'utf8');
    expect(mixed).toContain('# The deployer.\nkind: BotUser\nname: deployer # pushes releases\n');
  });

  describe('DIR is never modified, whichever way OUT reaches it', () => {
    it('OUT under a symbolic link to DIR', async () => {
      await symlink(dir, path.join(root, 'link'));
      const before = await digest(dir);
      const r = await migrate('--out', path.join(root, 'link', 'out'));
      expect(r.stderr).toMatch(/--out .*link\/out is inside .*edges/);
      expect(r.code).toBe(64);
      expect(await digest(dir)).toBe(before);
    });

    it('DIR named through a symbolic link, OUT inside it', async () => {
      await symlink(dir, path.join(root, 'link'));
      const r = await runCli(
        [
          'migrate',
          path.join(root, 'link'),
          '--out',
          path.join(dir, 'out'),
          '--backend',
          `${WEB}=https://web.internal`,
        ],
        { env: { UPSTREAM_KEY: SECRET } },
      );
      expect(r.stderr).toContain('is inside');
      expect(r.code).toBe(64);
      await expect(stat(path.join(dir, 'out'))).rejects.toThrow(/ENOENT/);
    });

    it('OUT holding DIR (a file of DIR could be written over)', async () => {
      const before = await digest(dir);
      const r = await migrate('--out', root);
      expect(r.stderr).toContain('holds');
      expect(r.code).toBe(64);
      expect(await digest(dir)).toBe(before);
    });
  });

  it.each([
    [['--out', 'inside'], 'is inside'],
    [['--out', 'x', '--backend', 'nope'], 'expected ID=URL'],
    [['--out', 'x', '--backend', `${WEB}=https://web.example.com`], 'is not an internal URL'],
    [[], '--out OUTDIR is required'],
  ])('usage errors: %j', async (args, message) => {
    const r = await runCli(
      ['migrate', dir, ...args.map((a) => (a === 'inside' ? path.join(dir, 'out') : a))],
      { cwd: root },
    );
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(message);
  });

  it('writes a ReservedDomain for each public host before its endpoint, carries protect and suspend, and its output validates and plans as it is', async () => {
    await writeFile(
      path.join(dir, 'team', 'api.yaml'),
      `kind: TLSEdge\nname: api\nprotect: true\nsuspend: true\nhostports: [api.example.com:443]\nbackend: { backend_id: ${DB} }\n---\nkind: ReservedDomain\nname: wild\ndomain: "*.example.org"\n---\nkind: TLSEdge\nname: org\nhostports: [db.example.org:443]\nbackend: { backend_id: ${DB} }\n`,
    );
    const r = await migrate('--backend', `${DB}=tls://db.internal:5432`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('2 reserved domain(s)');
    const docs = parseAllDocuments(await readFile(path.join(out, 'team', 'api.yaml'), 'utf8')).map(
      (d) => d.toJS(),
    );
    expect(docs.map((d) => `${d.kind} ${d.name}`)).toEqual([
      'ReservedDomain api.example.com',
      'CloudEndpoint api',
      'ReservedDomain wild',
      'CloudEndpoint org',
    ]);
    expect(docs[0]).toEqual({
      kind: 'ReservedDomain',
      name: 'api.example.com',
      domain: 'api.example.com',
    });
    expect(docs[1]).toMatchObject({
      url: 'tls://api.example.com:443',
      protect: true,
      suspend: true,
    });
    const shop = parseAllDocuments(await readFile(path.join(out, 'shop.yaml'), 'utf8')).map((d) =>
      d.toJS(),
    );
    expect(shop.map((d) => d.kind)).toEqual(['ReservedDomain', 'CloudEndpoint', 'BotUser']);

    const validated = await runCli(['validate', out], { env: { UPSTREAM_KEY: SECRET } });
    expect(validated.code, validated.stderr).toBe(0);
    const server = await startTestServer({ requireReservedDomains: true });
    try {
      const env = { ...apiEnv(server.url, server.apiKey), UPSTREAM_KEY: SECRET };
      const planned = await runCli(['plan', out, '--output', 'json'], { env });
      expect(planned.code, planned.stderr).toBe(0);
      const plan = JSON.parse(planned.stdout) as {
        changes: { address: string; action: string }[];
        blocked: { address: string; kind: string }[];
      };
      expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
        'create bot_user.ci',
        'create bot_user.deployer',
        'create cloud_endpoint.org',
        'create cloud_endpoint.shop',
        'create reserved_domain.api.example.com',
        'create reserved_domain.shop.example.com',
        'create reserved_domain.wild',
      ]);
      expect(plan.blocked).toEqual([
        { address: 'cloud_endpoint.api', kind: 'suspended', reason: expect.any(String) },
      ]);
    } finally {
      await server.close();
    }
  });
});
