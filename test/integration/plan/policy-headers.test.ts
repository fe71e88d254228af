/**
 * Credential headers in a traffic policy's header maps (add-headers, custom-response) are
 * secrets by the rule the edges' headers modules follow: against the local server over HTTP,
 * `plan` in text, JSON and Markdown never shows their values (the manifest's, written inline or
 * read from env, nor the live endpoint's), and `import` writes them as `{ env }` references.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, tempDir } from '../apply/helpers.js';
import { call } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const MANIFEST_BEARER = 'Bearer manifest-bearer-5f1c';
const MANIFEST_KEY = 'manifest-api-key-93ad';
const ENV_TOKEN = 'env-token-value-2b7e';
const LIVE_BEARER = 'Bearer live-bearer-c04a';
const LIVE_KEY = 'live-api-key-81e6';
const LIVE_COOKIE = 'live-cookie-value-6d2f';
const SECRETS = [MANIFEST_BEARER, MANIFEST_KEY, ENV_TOKEN, LIVE_BEARER, LIVE_KEY, LIVE_COOKIE];

const MANIFEST = `kind: CloudEndpoint
name: api
url: https://api.example.com
traffic_policy:
  on_http_request:
    - actions:
        - type: add-headers
          config:
            headers:
              authorization: "${MANIFEST_BEARER}"
              x-api-key: ${MANIFEST_KEY}
              x-token: { env: UPSTREAM_TOKEN }
              x-trace: shown-trace-value
        - type: custom-response
          config: { status_code: 200 }
`;

/** The live endpoint: the same shape, other values (drift in every header). */
const LIVE_POLICY = [
  'on_http_request:',
  '  - actions:',
  '      - type: add-headers',
  '        config:',
  '          headers:',
  `            authorization: "${LIVE_BEARER}"`,
  `            x-api-key: ${LIVE_KEY}`,
  `            x-token: ${LIVE_COOKIE}`,
  '            x-trace: live-trace-value',
  '      - type: custom-response',
  `        config: { status_code: 200, headers: { set-cookie: ${LIVE_COOKIE} } }`,
].join('\n');

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  tmp = await tempDir('edgesync-policy-headers-');
  dir = path.join(tmp.dir, 'manifests');
  await mkdir(dir);
  await writeFile(path.join(dir, 'api.yaml'), MANIFEST);
  await call(server, 'POST', '/endpoints', {
    url: 'https://api.example.com',
    traffic_policy: LIVE_POLICY,
    metadata: storedMetadata({}, { owner: 'default', name: 'api', protect: false }),
  });
});
afterAll(async () => {
  await server.close();
  await tmp.cleanup();
});

const env = () => ({ ...apiEnv(server.url, server.apiKey), UPSTREAM_TOKEN: ENV_TOKEN });

describe('credential headers in a policy', () => {
  it.each(['text', 'json', 'markdown'])(
    'plan --output %s masks them, manifest and live',
    async (output) => {
      const run = await runCli(['plan', '--output', output, dir], { env: env() });
      expect(run.code, run.stderr).toBe(0);
      // The drift is shown: the header's path, and the value of a header that is no credential.
      expect(run.stdout).toContain('config.headers.authorization');
      expect(run.stdout).toContain('shown-trace-value');
      expect(run.stdout).toContain('(sensitive)');
      for (const secret of SECRETS) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
      }
    },
  );

  it('import writes them as { env } references, never their values', async () => {
    const out = path.join(tmp.dir, 'imported');
    const run = await runCli(['import', '--out', out], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    const files = (await readdir(out)).filter((f) => f.endsWith('.yaml'));
    expect(files).toEqual(['endpoint-api.yaml']);
    const text = await readFile(path.join(out, 'endpoint-api.yaml'), 'utf8');
    expect(text).toMatch(/authorization:\n\s+env: EDGESYNC_CLOUD_ENDPOINT_API_/);
    expect(text).toMatch(/x-token:\n\s+env: EDGESYNC_CLOUD_ENDPOINT_API_/);
    expect(text).toMatch(/set-cookie:\n\s+env: EDGESYNC_CLOUD_ENDPOINT_API_/);
    expect(text).toContain('x-trace: live-trace-value');
    for (const output of [text, run.stdout, run.stderr]) {
      for (const secret of SECRETS) expect(output).not.toContain(secret);
    }
  });
});
