/**
 * The service's official TypeScript client (@ngrok/ngrok-api) against the local server, for
 * every operation it offers on the resources the server implements: TLS and HTTPS edges,
 * routes, their modules and bot users, and the account resources it knows (reserved domains,
 * certificate authorities). (It also offers TCP edges and a `policy` module, which the
 * specification does not have.) The client sends module replacements wrapped as `{ id, module }`
 * (route modules with `edge_id`) and pages with `beforeId`. Between the two sits a loopback
 * proxy that renames only the client's version header to ours, and records what the server
 * answered to each DELETE (the client also rewrites header names in maps to camelCase, hence the
 * lower-case names without dashes below): the client fails to parse the empty 204 body the specification
 * requires, which is its bug; the test checks the wire there instead.
 */
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ngrok } from '@ngrok/ngrok-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../src/server/index.js';
import { CA_PEM } from '../../helpers/ca-pems.js';
import { startTestServer } from '../../helpers/server.js';

interface Answer {
  method: string;
  path: string;
  status: number;
  body: string;
}

let server: RunningServer & { apiKey: string };
let proxy: ReturnType<typeof createServer>;
let ngrok: Ngrok;
const answers: Answer[] = [];

function renamed(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'ngrok-version': version, ...rest } = headers;
  return { ...rest, 'svc-version': version };
}

beforeAll(async () => {
  server = await startTestServer();
  const upstream = new URL(server.url);
  proxy = createServer((req, res) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: renamed(req.headers),
      },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const body = Buffer.concat(chunks);
          answers.push({
            method: req.method ?? '',
            path: req.url ?? '',
            status: up.statusCode ?? 0,
            body: body.toString(),
          });
          res.writeHead(up.statusCode ?? 502, up.headers);
          res.end(body);
        });
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  ngrok = new Ngrok({ baseUrl: `http://127.0.0.1:${port}`, apiToken: server.apiKey });
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

/**
 * A client DELETE: the server must answer 204 with an empty body; the client's failure to parse
 * that empty body is the one error tolerated.
 */
async function deleted(call: () => Promise<unknown>, path: string): Promise<void> {
  await call().catch((err: unknown) => {
    if (!/JSON|Unexpected end/i.test(String((err as Error)?.message ?? err))) throw err;
  });
  const answer = answers.filter((a) => a.method === 'DELETE' && a.path === path).at(-1);
  expect(answer).toEqual({ method: 'DELETE', path, status: 204, body: '' });
}

interface ModuleService<Item> {
  replace(arg: Item & { module: unknown }): Promise<unknown>;
  get(item: Item | string): Promise<unknown>;
  delete(item: Item | string): Promise<void>;
}

async function exerciseModule<Item extends { id: string }>(
  service: unknown,
  item: Item,
  path: string,
  module: Record<string, unknown>,
  read: Record<string, unknown>,
): Promise<void> {
  const s = service as ModuleService<Item>;
  const key = 'edgeId' in item ? item : item.id;
  expect(await s.replace({ ...item, module })).toMatchObject(read);
  expect(await s.get(key)).toMatchObject(read);
  await deleted(() => s.delete(key), path);
  await expect(s.get(key)).rejects.toMatchObject({ statusCode: 404 });
}

describe('the official TypeScript client against edgesync server', () => {
  it('bot users: create, get, update, list page by page (beforeId), delete', async () => {
    const created = [];
    for (const name of ['a', 'b', 'c']) created.push(await ngrok.botUsers.create({ name }));
    const first = created[0];
    if (!first) throw new Error('no bot user');
    expect(await ngrok.botUsers.get(first.id)).toMatchObject({ id: first.id, name: 'a' });
    expect(await ngrok.botUsers.update({ id: first.id, active: false })).toMatchObject({
      active: false,
    });
    const before = answers.length;
    const listed = await ngrok.botUsers.list(undefined, '2');
    expect(listed.map((b) => b.id).sort()).toEqual(created.map((b) => b.id).sort());
    expect(answers.slice(before).some((a) => a.path.includes('beforeId='))).toBe(true);
    for (const b of created) await deleted(() => ngrok.botUsers.delete(b.id), `/bot_users/${b.id}`);
  });

  it('TLS edges and their modules', async () => {
    const edges = [];
    for (const d of ['one', 'two', 'three']) {
      edges.push(await ngrok.edges.edgesTls.create({ description: d }));
    }
    const edge = edges[0];
    if (!edge) throw new Error('no edge');
    expect(await ngrok.edges.edgesTls.get(edge.id)).toMatchObject({ id: edge.id });
    expect(await ngrok.edges.edgesTls.update({ id: edge.id, metadata: 'm' })).toMatchObject({
      metadata: 'm',
    });
    const listed = await ngrok.edges.edgesTls.list(undefined, '2');
    expect(listed.map((e) => e.id).sort()).toEqual(edges.map((e) => e.id).sort());
    const m = ngrok.edgeModules;
    const at = (name: string) => `/edges/tls/${edge.id}/${name}`;
    await exerciseModule(
      m.tlsEdgeBackendModule,
      { id: edge.id },
      at('backend'),
      { backendId: 'bkdtg_1' },
      { backend: { id: 'bkdtg_1' } },
    );
    await exerciseModule(
      m.tlsEdgeIpRestrictionModule,
      { id: edge.id },
      at('ip_restriction'),
      { ipPolicyIds: ['ipp_1'] },
      { ipPolicies: [{ id: 'ipp_1' }] },
    );
    await exerciseModule(
      m.tlsEdgeMutualTlsModule,
      { id: edge.id },
      at('mutual_tls'),
      { certificateAuthorityIds: ['ca_9'] },
      { certificateAuthorities: [{ id: 'ca_9' }] },
    );
    await exerciseModule(
      m.tlsEdgeTlsTerminationModule,
      { id: edge.id },
      at('tls_termination'),
      { terminateAt: 'agent', minVersion: '1.1' },
      { terminateAt: 'agent' },
    );
    for (const e of edges) {
      await deleted(() => ngrok.edges.edgesTls.delete(e.id), `/edges/tls/${e.id}`);
    }
  });

  it('HTTPS edges, routes and their modules', async () => {
    const edge = await ngrok.edges.edgesHttps.create({ description: 'web' });
    expect(await ngrok.edges.edgesHttps.get(edge.id)).toMatchObject({ id: edge.id });
    expect(await ngrok.edges.edgesHttps.update({ id: edge.id, metadata: 'm' })).toMatchObject({
      metadata: 'm',
    });
    expect((await ngrok.edges.edgesHttps.list()).map((e) => e.id)).toContain(edge.id);
    const m = ngrok.edgeModules;
    const at = (name: string) => `/edges/https/${edge.id}/${name}`;
    await exerciseModule(
      m.httpsEdgeMutualTlsModule,
      { id: edge.id },
      at('mutual_tls'),
      { certificateAuthorityIds: ['ca_9'] },
      { certificateAuthorities: [{ id: 'ca_9' }] },
    );
    await exerciseModule(
      m.httpsEdgeTlsTerminationModule,
      { id: edge.id },
      at('tls_termination'),
      { minVersion: '1.2' },
      { minVersion: '1.2' },
    );

    const routes = ngrok.edges.edgesHttpsRoutes;
    const route = await routes.create({ edgeId: edge.id, matchType: 'path_prefix', match: '/' });
    const item = { edgeId: edge.id, id: route.id };
    expect(await routes.get(item)).toMatchObject({ id: route.id, match: '/' });
    expect(await routes.update({ ...item, matchType: 'path_prefix', match: '/app' })).toMatchObject(
      { match: '/app' },
    );
    const rt = (name: string) => `/edges/https/${edge.id}/routes/${route.id}/${name}`;
    const cases: [unknown, string, Record<string, unknown>, Record<string, unknown>][] = [
      [
        m.edgeRouteBackendModule,
        'backend',
        { backendId: 'bkdtg_1' },
        { backend: { id: 'bkdtg_1' } },
      ],
      [
        m.edgeRouteIpRestrictionModule,
        'ip_restriction',
        { ipPolicyIds: ['ipp_1'] },
        { ipPolicies: [{ id: 'ipp_1' }] },
      ],
      [
        m.edgeRouteRequestHeadersModule,
        'request_headers',
        { add: { xreq: 'v' } },
        { add: { xreq: 'v' } },
      ],
      [
        m.edgeRouteResponseHeadersModule,
        'response_headers',
        { remove: ['server'] },
        { remove: ['server'] },
      ],
      [m.edgeRouteCompressionModule, 'compression', { enabled: false }, { enabled: false }],
      [
        m.edgeRouteCircuitBreakerModule,
        'circuit_breaker',
        { trippedDuration: 7, rollingWindow: 30, numBuckets: 128, volumeThreshold: 5 },
        { trippedDuration: 7, rollingWindow: 30 },
      ],
      [
        m.edgeRouteWebhookVerificationModule,
        'webhook_verification',
        { provider: 'github', secret: 's3cret' },
        { provider: 'github' },
      ],
      [
        m.edgeRouteOAuthModule,
        'oauth',
        { provider: { google: { clientId: 'id', clientSecret: 'sec', scopes: ['email'] } } },
        { provider: { google: { clientId: 'id' } } },
      ],
      [
        m.edgeRouteSamlModule,
        'saml',
        { idpMetadata: '<EntityDescriptor/>' },
        { idpMetadata: '<EntityDescriptor/>' },
      ],
      [
        m.edgeRouteOidcModule,
        'oidc',
        { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: 's' },
        { issuer: 'https://accounts.example.com' },
      ],
      [m.edgeRouteWebsocketTcpConverterModule, 'websocket_tcp_converter', {}, { enabled: true }],
      [
        m.edgeRouteUserAgentFilterModule,
        'user_agent_filter',
        { deny: ['^curl/'] },
        { deny: ['^curl/'] },
      ],
    ];
    for (const [service, name, module, read] of cases) {
      await exerciseModule(service, item, rt(name), module, read);
    }
    await deleted(() => routes.delete(item), `/edges/https/${edge.id}/routes/${route.id}`);
    await deleted(() => ngrok.edges.edgesHttps.delete(edge.id), `/edges/https/${edge.id}`);
  });
});

describe('the wrapped module body and beforeId stay strict', () => {
  async function send(method: string, path: string, body?: unknown) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        'svc-version': '2',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  }

  it('refuses ids that do not match the path, and unknown keys beside the module', async () => {
    const edge = JSON.parse((await send('POST', '/edges/https', {})).text) as { id: string };
    const route = JSON.parse(
      (
        await send('POST', `/edges/https/${edge.id}/routes`, {
          match_type: 'path_prefix',
          match: '/',
        })
      ).text,
    ) as { id: string };
    const path = `/edges/https/${edge.id}/routes/${route.id}/compression`;
    const module = { enabled: true };
    expect((await send('PUT', path, { module })).status).toBe(200);
    expect((await send('PUT', path, { id: route.id, edge_id: edge.id, module })).status).toBe(200);
    const wrongId = await send('PUT', path, { id: 'edghtsrt_x', module });
    expect(wrongId).toMatchObject({ status: 400, text: expect.stringMatching(/does not match/) });
    expect((await send('PUT', path, { edge_id: 'edghts_x', module })).status).toBe(400);
    expect((await send('PUT', path, { module, extra: 1 })).status).toBe(400);
    const edgeModule = `/edges/https/${edge.id}/mutual_tls`;
    const mtls = { certificate_authority_ids: [] };
    expect((await send('PUT', edgeModule, { id: edge.id, module: mtls })).status).toBe(200);
    // edge_id belongs to route modules only.
    expect((await send('PUT', edgeModule, { edge_id: edge.id, module: mtls })).status).toBe(400);
  });

  it('takes beforeId as before_id, never both, and checks its prefix', async () => {
    expect((await send('GET', '/bot_users?beforeId=bot_zzz&limit=1')).status).toBe(200);
    expect((await send('GET', '/bot_users?beforeId=edgtls_1')).status).toBe(400);
    expect((await send('GET', '/bot_users?beforeId=bot_1&before_id=bot_1')).status).toBe(400);
    expect((await send('GET', '/bot_users?before=bot_1')).status).toBe(400);
  });

  it('reserved domains: create, get, update, list, certificate deletes, delete', async () => {
    const domain = await ngrok.reservedDomains.create({
      domain: 'official.example.com',
      region: '',
    });
    expect(domain).toMatchObject({ domain: 'official.example.com', certificate: null });
    expect(domain.certificateManagementPolicy).toMatchObject({ authority: 'letsencrypt' });
    expect(await ngrok.reservedDomains.get(domain.id)).toMatchObject({ id: domain.id });
    const updated = await ngrok.reservedDomains.update({
      id: domain.id,
      description: 'd',
      certificateManagementPolicy: { authority: 'letsencrypt', privateKeyType: 'rsa' },
    });
    expect(updated).toMatchObject({ description: 'd' });
    expect(updated.certificateManagementPolicy).toMatchObject({ privateKeyType: 'rsa' });
    expect((await ngrok.reservedDomains.list()).map((d) => d.id)).toEqual([domain.id]);
    const path = `/reserved_domains/${domain.id}`;
    await deleted(() => ngrok.reservedDomains.deleteCertificate(domain.id), `${path}/certificate`);
    await deleted(
      () => ngrok.reservedDomains.deleteCertificateManagementPolicy(domain.id),
      `${path}/certificate_management_policy`,
    );
    await deleted(() => ngrok.reservedDomains.delete(domain.id), path);
  });

  it('certificate authorities: create, get, update, list, delete', async () => {
    const ca = await ngrok.certificateAuthorities.create({ caPem: CA_PEM, description: 'corp' });
    expect(ca).toMatchObject({ subjectCommonName: 'Corp Root CA', caPem: CA_PEM });
    expect(await ngrok.certificateAuthorities.get(ca.id)).toMatchObject({ id: ca.id });
    expect(await ngrok.certificateAuthorities.update({ id: ca.id, metadata: 'm' })).toMatchObject({
      metadata: 'm',
    });
    expect((await ngrok.certificateAuthorities.list()).map((c) => c.id)).toEqual([ca.id]);
    await deleted(
      () => ngrok.certificateAuthorities.delete(ca.id),
      `/certificate_authorities/${ca.id}`,
    );
  });
});
