/**
 * config-examples/endpoints/: valid (its secret given through the environment, as the example
 * says), showing the OAuth-protected app with headers, compression, an IP restriction and a
 * forward-internal backend, with the client secret sensitive; and each endpoint accepted as is
 * by the local server (over HTTP) in the form edgesync sends it. Not part of what `npm start`
 * reconciles.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { startTestServer } from '../../helpers/server.js';
import { clientFor } from '../server/client.js';

const repo = path.resolve(import.meta.dirname, '../../..');
const examples = path.join(repo, 'config-examples/endpoints');
const env = { PORTAL_GOOGLE_CLIENT_SECRET: 'GOCSPX-example-portal-secret' };

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('config-examples/endpoints', () => {
  it('are valid with their secret in the environment, and say which variable is missing', async () => {
    const result = await loadManifests(examples, { env });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
    const without = await loadManifests(examples, { env: {} });
    expect(without.diagnostics.map(formatDiagnostic)).toEqual([
      'portal.yaml:29:35: traffic_policy.on_http_request[1].actions[0].config.client_secret: environment variable PORTAL_GOOGLE_CLIENT_SECRET is not set',
    ]);
  });

  it('show an OAuth-protected app with headers, compression, an IP restriction and a backend', async () => {
    const result = await loadManifests(examples, { env });
    if (!result.ok) throw new Error('examples invalid');
    const portal = result.set.cloudEndpoints.find((e) => e.name === 'portal');
    const types = JSON.stringify(portal?.traffic_policy).match(/"type":"[a-z-]+"/g) ?? [];
    for (const type of [
      'oauth',
      'add-headers',
      'compress-response',
      'restrict-ips',
      'forward-internal',
    ]) {
      expect(types, type).toContain(`"type":"${type}"`);
    }
    expect(portal?.sensitive).toEqual([
      ['traffic_policy', 'on_http_request', 1, 'actions', 0, 'config', 'client_secret'],
    ]);
  });

  it('are accepted by the local server as edgesync sends them', async () => {
    const result = await loadManifests(examples, { env });
    if (!result.ok) throw new Error('examples invalid');
    const call = clientFor(server, server.apiKey);
    for (const ep of result.set.cloudEndpoints) {
      const reply = await call('POST', '/endpoints', {
        url: ep.url,
        bindings: ep.bindings,
        pooling_enabled: ep.pooling_enabled,
        traffic_policy: JSON.stringify(ep.traffic_policy),
        ...(ep.description === undefined ? {} : { description: ep.description }),
      });
      expect(reply.status, `${ep.name}: ${reply.text}`).toBe(201);
    }
  });

  it('start with the schema line, and are not what npm start reconciles', async () => {
    const result = await loadManifests(examples, { env });
    for (const file of result.files) {
      const text = await readFile(path.join(examples, file), 'utf8');
      expect(text.split('\n')[0], file).toBe(
        '# yaml-language-server: $schema=../../schema/edgesync.schema.json',
      );
    }
    const pkg = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    expect(pkg.scripts.start).not.toContain('config-examples/endpoints');
  });
});
