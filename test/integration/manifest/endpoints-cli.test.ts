/**
 * `edgesync validate` on directories holding cloud endpoints (run in-process through `main`, on
 * the real file system): a mixed valid directory, every error located inside the policy, and
 * secret markers (read from env and file, written inline in secret fields) that never reach
 * stdout or stderr, as text or JSON, even inside an error about the field that holds them.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';

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

const ENV_SECRET = 'Env-Secret-client-3b91f0c2aa';
const FILE_SECRET = 'File-Secret-webhook-77d2e0a1';
const INLINE_SECRET = 'Inline-Secret-tlskey-c4e98b10';
/** Inline in a secret field, and broken (its `${` interpolation is no CEL): the error is about it. */
const BROKEN_SECRET = `Broken-Secret-$${'{'}x y}-51aa`;
/** Read from env into a header value (no secret field), and broken the same way. */
const HEADER_SECRET = `Header-Secret-$${'{'}p q}-0be3`;

const APP = `kind: CloudEndpoint
name: app
url: https://App.Example.com:443
description: The shop, behind a login
metadata: { team: web }
traffic_policy:
  on_http_request:
    - actions:
        - type: oauth
          config:
            provider: google
            client_id: shop
            client_secret: { env: CLIENT_SECRET }
    - actions:
        - type: forward-internal
          config: { url: https://web.internal }
  on_http_response:
    - actions:
        - type: compress-response
`;

const DB = `kind: CloudEndpoint
name: db
url: tls://db.example.com:443
traffic_policy: |
  on_tcp_connect:
    - actions:
        - type: restrict-ips
          config: { allow: [10.0.0.0/8] }
        - type: forward-internal
          config: { url: tls://db.internal:443 }
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-endpoints-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('edgesync validate with cloud endpoints', () => {
  it('accepts a directory mixing endpoints, edges and bot users, and counts them', async () => {
    await writeFile(path.join(dir, 'app.yaml'), APP);
    await writeFile(path.join(dir, 'db.yaml'), DB);
    await writeFile(
      path.join(dir, 'rest.yaml'),
      'kind: TLSEdge\nname: legacy\nhostports: [legacy.example.com:443]\n---\nkind: BotUser\nname: ci\n',
    );
    const r = await cli(['validate', dir], '/', { CLIENT_SECRET: ENV_SECRET });
    expect(r).toEqual({
      code: 0,
      stdout: '',
      stderr:
        '4 manifests valid (1 TLS edge, 0 HTTPS edges with 0 routes, 1 bot user, 2 cloud endpoints) in 3 files\n',
    });
  });

  it('reports every error located in the policy, as text and as JSON', async () => {
    await writeFile(path.join(dir, 'app.yaml'), APP.replace('compress-response', 'compress'));
    await writeFile(
      path.join(dir, 'db.yaml'),
      DB.replace('tls://db.internal:443', 'https://db.internal'),
    );
    const r = await cli(['validate', dir], '/', { CLIENT_SECRET: ENV_SECRET });
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(
        /^app\.yaml:19:17: traffic_policy\.on_http_response\[0\]\.actions\[0\]\.type: unknown action type "compress"; known: /,
      ),
      "db.yaml:10:26: traffic_policy.on_tcp_connect[0].actions[1].config.url: https://db.internal is not of the endpoint's protocol (tls)",
    ]);
    const json = await cli(['validate', '--output', 'json', dir], '/', {
      CLIENT_SECRET: ENV_SECRET,
    });
    const report = JSON.parse(json.stdout) as { diagnostics: { path: string }[] };
    expect(report.diagnostics.map((d) => d.path)).toEqual([
      'traffic_policy.on_http_response[0].actions[0].type',
      'traffic_policy.on_tcp_connect[0].actions[1].config.url',
    ]);
  });

  it('never prints a secret, from env, file or inline, even in an error about it', async () => {
    await mkdir(path.join(dir, 'secrets'));
    await writeFile(path.join(dir, 'secrets', 'hook'), `${FILE_SECRET}\n`);
    const policy = `kind: CloudEndpoint
name: hooks
url: https://hooks.example.com
traffic_policy:
  on_tcp_connect:
    - actions:
        - type: terminate-tls
          config:
            server_certificate: "-----BEGIN CERTIFICATE----- x"
            server_private_key: "-----BEGIN ${INLINE_SECRET}"
  on_http_request:
    - actions:
        - type: verify-webhook
          config: { provider: github, secret: { file: secrets/hook } }
        - type: verify-webhook
          config: { provider: stripe, secret: "${BROKEN_SECRET}" }
        - type: oauth
          config: { provider: google, client_id: x, client_secret: { env: CLIENT_SECRET } }
        - type: forward-internal
          config: { url: { env: CLIENT_SECRET } }
  on_http_response:
    - actions:
        - type: add-headers
          config: { headers: { x-token: { env: HEADER } } }
`;
    await writeFile(path.join(dir, 'hooks.yaml'), policy);
    const env = { CLIENT_SECRET: ENV_SECRET, HEADER: HEADER_SECRET };
    const text = await cli(['validate', dir], '/', env);
    const json = await cli(['validate', '--output', 'json', dir], '/', env);
    expect(text.code).toBe(1);
    // The errors are there (about the broken secret and the URL read from env)...
    expect(text.stderr).toContain('traffic_policy.on_http_request[0].actions[1].config.secret');
    expect(text.stderr).toContain('traffic_policy.on_http_request[0].actions[3].config.url');
    expect(text.stderr).toContain('traffic_policy.on_http_response[0].actions[0].config.headers');
    // ...and no secret is in them.
    for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) {
      for (const marker of [ENV_SECRET, FILE_SECRET, INLINE_SECRET, BROKEN_SECRET, 'x y', 'p q']) {
        expect(out).not.toContain(marker);
      }
    }
  });
});
