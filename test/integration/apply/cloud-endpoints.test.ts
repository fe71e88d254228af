/**
 * Cloud endpoints against the real local server over HTTP, with desired sets built in code:
 * observe (the fourth list and its call count), apply and convergence, agent and foreign
 * endpoints never touched, a policy written by hand as YAML staying converged, a URL change
 * replaced, the ordering after an edge that releases the host and port (the server answers 381
 * otherwise), and the create not attempted when that release fails.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  endpointUpdateSchema,
  type LiveSnapshot,
  observe,
} from '../../../src/api/index.js';
import { applyAndVerify } from '../../../src/apply/cycle.js';
import { executePlan } from '../../../src/apply/executor.js';
import { observeAfterApply, touchedRoots, verifyTouched } from '../../../src/apply/verify.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { buildPlan } from '../../../src/plan/plan.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import {
  DENY_POLICY,
  desiredSet,
  endpointManifest,
  tlsManifest,
} from '../../unit/plan/builders.js';
import { apiClient } from './helpers.js';

const OURS = (name: string) => storedMetadata({}, { owner: 'default', name, protect: false });

let server: RunningServer & { apiKey: string };
let client: ApiClient;
beforeEach(async () => {
  server = await startTestServer({
    // An agent endpoint claiming to be ours, by the name a manifest uses: never touched.
    agentEndpoints: [{ url: 'https://agent.example.com', metadata: OURS('web') }],
  });
  client = apiClient(server.url, server.apiKey);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

/** One apply, as `apply --yes` runs it: plan, execute, observe again, plan again. */
async function apply(desired: DesiredSet) {
  const live = await observe(client);
  const plan = buildPlan(desired, live);
  const outcome = await applyAndVerify(plan, {
    client,
    live,
    replan: async () => {
      const again = await observe(client);
      return { live: again, plan: buildPlan(desired, again) };
    },
  });
  return { plan, outcome };
}

const set = (...endpoints: ReturnType<typeof endpointManifest>[]) => desiredSet({ endpoints });

/** The records apply must never change, by ID, as the server returns them. */
function untouched(live: LiveSnapshot, ids: readonly string[]): string[] {
  return live.cloudEndpoints.filter((e) => ids.includes(e.id)).map((e) => JSON.stringify(e));
}

describe('cloud endpoints over HTTP', () => {
  it('the client: create, get, partial PATCH, delete; agent endpoints are read-only', async () => {
    const created = await client.createEndpoint({
      url: 'https://crud.example.com',
      traffic_policy: JSON.stringify(DENY_POLICY),
      description: 'first',
    });
    expect(created).toMatchObject({ type: 'cloud', url: 'https://crud.example.com' });
    const patched = await client.updateEndpoint(created.id, { pooling_enabled: true });
    // Partial: what the PATCH did not name is as it was.
    expect(patched).toMatchObject({ description: 'first', pooling_enabled: true });
    expect(await client.getEndpoint(created.id)).toEqual(patched);
    await client.deleteEndpoint(created.id);
    await expect(client.getEndpoint(created.id)).rejects.toMatchObject({ status: 404 });
    const agent = (await observe(client)).cloudEndpoints[0];
    await expect(
      client.updateEndpoint(agent?.id as string, { description: 'x' }),
    ).rejects.toMatchObject({ status: 400 });
    // The write shapes are strict: an unknown field is refused before any request.
    expect(endpointUpdateSchema.safeParse({ type: 'cloud' }).success).toBe(false);
  });

  it('observe lists every endpoint, agent ones included, in max(1, ceil(n/100)) calls', async () => {
    let live = await observe(client);
    expect(live.cloudEndpoints.map((e) => e.type)).toEqual(['agent']);
    expect(live.calls.cloud_endpoint).toBe(1);
    for (let i = 0; i < 100; i++) {
      await client.createEndpoint({
        url: `https://e${i}.example.com`,
        traffic_policy: JSON.stringify(DENY_POLICY),
      });
    }
    live = await observe(client);
    expect(live.cloudEndpoints).toHaveLength(101);
    expect(live.calls.cloud_endpoint).toBe(2);
    // Empty fields are omitted by the service, and read as absent.
    const bare = live.cloudEndpoints.find((e) => e.url === 'https://e0.example.com');
    expect(bare?.description).toBeUndefined();
    expect(bare?.metadata).toBeUndefined();
  });

  it('applies, converges, and never touches agent, foreign or unowned endpoints', async () => {
    const foreign = await client.createEndpoint({
      url: 'https://foreign.example.com',
      traffic_policy: JSON.stringify(DENY_POLICY),
      metadata: storedMetadata({}, { owner: 'team-b', name: 'web', protect: false }),
    });
    const unowned = await client.createEndpoint({
      url: 'https://unowned.example.com',
      traffic_policy: JSON.stringify(DENY_POLICY),
    });
    const before = await observe(client);
    const agent = before.cloudEndpoints.find((e) => e.type === 'agent')?.id as string;
    const others = [agent, foreign.id, unowned.id];
    const kept = untouched(before, others);

    const desired = set(
      endpointManifest({ name: 'web', url: 'https://web.example.com', description: 'site' }),
      endpointManifest({
        name: 'api',
        url: 'tls://api.example.com:443',
        traffic_policy: { on_tcp_connect: [{ actions: [{ type: 'deny' }] }] },
      }),
    );
    const first = await apply(desired);
    expect(first.outcome.result.failed).toBe(0);
    expect(first.outcome.converged).toBe(true);
    expect(first.outcome.result.writes).toBe(2);

    const after = await observe(client);
    expect(untouched(after, others)).toEqual(kept);
    expect(buildPlan(desired, after).changes.every((c) => c.operations.length === 0)).toBe(true);

    // An empty manifest set with --allow-empty deletes ours only.
    const writes = writesAt(server);
    const live = await observe(client);
    const plan = buildPlan(set(), live, { allowEmpty: true });
    const result = await executePlan(plan, {
      client,
      guards: { allowEmpty: true, desiredCount: 0, live },
    });
    expect(result.writes).toBe(2);
    expect(writesAt(server) - writes).toBe(2);
    const last = await observe(client);
    expect(untouched(last, others)).toEqual(kept);
    expect(last.cloudEndpoints.map((e) => e.id).sort()).toEqual([...others].sort());
  });

  it('a policy written by hand as YAML, same data, stays converged: zero writes', async () => {
    await client.createEndpoint({
      url: 'https://web.example.com',
      traffic_policy: '# by hand\non_http_request:\n  -   actions:\n        - { type: deny }\n',
      metadata: OURS('web'),
      description: 'site',
    });
    const writes = writesAt(server);
    const { plan, outcome } = await apply(
      set(
        endpointManifest({ name: 'web', url: 'https://Web.Example.com:443', description: 'site' }),
      ),
    );
    expect(plan.changes.map((c) => c.action)).toEqual(['noop']);
    expect(outcome.converged).toBe(true);
    expect(writesAt(server)).toBe(writes);
  });

  it('an edited policy is one PATCH; a host change is one PATCH in place; a scheme change is a replacement; all converge', async () => {
    await apply(set(endpointManifest({ name: 'web', url: 'https://web.example.com' })));
    const policy = {
      on_http_request: [
        { actions: [{ type: 'add-headers', config: { headers: { 'x-a': '1' } } }] },
        { actions: [{ type: 'custom-response', config: { status_code: 404 } }] },
      ],
    };
    const before = { ...server.requests };
    const edited = await apply(
      set(
        endpointManifest({ name: 'web', url: 'https://web.example.com', traffic_policy: policy }),
      ),
    );
    expect(edited.outcome.converged).toBe(true);
    expect((server.requests.PATCH ?? 0) - (before.PATCH ?? 0)).toBe(1);

    const old = (await observe(client)).cloudEndpoints.find((e) => e.type === 'cloud');
    const beforeMove = { ...server.requests };
    const moved = await apply(
      set(
        endpointManifest({ name: 'web', url: 'https://www.example.com', traffic_policy: policy }),
      ),
    );
    expect(moved.plan.changes[0]?.action).toBe('update');
    expect(moved.outcome.converged).toBe(true);
    expect((server.requests.PATCH ?? 0) - (beforeMove.PATCH ?? 0)).toBe(1);
    expect((server.requests.DELETE ?? 0) - (beforeMove.DELETE ?? 0)).toBe(0);
    const now = (await observe(client)).cloudEndpoints.filter((e) => e.type === 'cloud');
    expect(now.map((e) => e.url)).toEqual(['https://www.example.com']);
    expect(now[0]?.id).toBe(old?.id);

    const rescheme = await apply(
      set(endpointManifest({ name: 'web', url: 'http://www.example.com', traffic_policy: policy })),
    );
    expect(rescheme.plan.changes[0]?.action).toBe('replace');
    expect(rescheme.outcome.converged).toBe(true);
    const after = (await observe(client)).cloudEndpoints.filter((e) => e.type === 'cloud');
    expect(after.map((e) => e.url)).toEqual(['http://www.example.com']);
    expect(after[0]?.id).not.toBe(old?.id);
  });

  it.each([
    ['https://h.example.com', 'tls'],
    ['tls://h.example.com:443', 'https'],
  ])('%s replaces the %s edge on its host and port in one apply', async (url, kind) => {
    const body = { hostports: ['h.example.com:443'], metadata: OURS('old') };
    if (kind === 'tls') await client.createTlsEdge(body);
    else await client.createHttpsEdge(body);
    const policy = url.startsWith('tls')
      ? { on_tcp_connect: [{ actions: [{ type: 'deny' }] }] }
      : DENY_POLICY;
    const { outcome } = await apply(
      set(endpointManifest({ name: 'h', url, traffic_policy: policy })),
    );
    expect(outcome.result.errors).toEqual([]);
    expect(outcome.converged).toBe(true);
    const live = await observe(client);
    expect(live.tlsEdges.length + live.httpsEdges.length).toBe(0);
    expect(live.cloudEndpoints.filter((e) => e.type === 'cloud').map((e) => e.url)).toEqual([url]);
  });

  it('the endpoint is not created when the edge could not release its host and port', async () => {
    // An edge the manifests keep, without that host and port: its update releases it.
    const edge = await client.createTlsEdge({
      hostports: ['h.example.com:443', 'k.example.com:443'],
      metadata: OURS('old'),
    });
    const live = await observe(client);
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'old', hostports: ['k.example.com:443'] })],
        endpoints: [endpointManifest({ name: 'h', url: 'https://h.example.com' })],
      }),
      live,
    );
    // The edge goes away behind the plan's back: its release PATCH answers 404 (vanished).
    await client.deleteTlsEdge(edge.id);
    const posts = server.requests.POST ?? 0;
    const result = await executePlan(plan, { client, guards: { live } });
    expect(result.failed).toBe(2);
    expect(result.errors.map((e) => e.message).join('\n')).toMatch(
      /cloud_endpoint\.h: not attempted: it waits for tls_edge\.old/,
    );
    expect(server.requests.POST ?? 0).toBe(posts);
    expect((await observe(client)).cloudEndpoints.filter((e) => e.type === 'cloud')).toEqual([]);
  });

  it('an edited policy costs a GET, a PATCH and a GET on the kept snapshot', async () => {
    await apply(set(endpointManifest({ name: 'web', url: 'https://web.example.com' })));
    const known = await observe(client);
    const desired = set(
      endpointManifest({
        name: 'web',
        url: 'https://web.example.com',
        traffic_policy: {
          on_http_request: [{ actions: [{ type: 'deny', config: { status_code: 401 } }] }],
        },
      }),
    );
    const calls = () => Object.values(server.requests).reduce((n, v) => n + v, 0);
    const start = calls();
    // The daemon's incremental path: plan on the kept snapshot, read the touched root by ID,
    // plan again, write, read back what was written.
    const guess = buildPlan(desired, known);
    const fresh = await verifyTouched(client, guess, known, { created: {} });
    const plan = buildPlan(desired, fresh);
    const { outcome } = {
      outcome: await applyAndVerify(plan, {
        client,
        live: fresh,
        replan: async (result) => {
          const again = await observeAfterApply(client, plan, fresh, result);
          return { live: again, plan: buildPlan(desired, again) };
        },
      }),
    };
    expect(touchedRoots(guess, { created: {} }).endpoints.size).toBe(1);
    expect(outcome.converged).toBe(true);
    expect(calls() - start).toBe(3);
  });
});
