/**
 * The cloud endpoint generators (test/helpers/arbitraries/) against the local server over HTTP:
 * every generated endpoint's create body is taken (201) and reads back equal (the policy
 * compared as parsed data), its manifest says the same as its body, a generated set coexists in
 * one account, and every single-fault mutation is refused with the code of the rule it breaks
 * and a message naming where, on create and as a PATCH of the valid endpoint (which it leaves
 * unchanged).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RunningServer } from '../../../src/server/index.js';
import {
  type CloudEndpointCase,
  cloudEndpoint,
  cloudEndpointSet,
  createBody,
  envOf,
  expectedRecord,
  manifestText,
  resolvedPolicy,
} from '../../helpers/arbitraries/cloud-endpoint.js';
import { FAULT_RULES, faultyCloudEndpoint } from '../../helpers/arbitraries/faults.js';
import { liveIpPolicies } from '../../helpers/live-ip-policies.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;

let live: (text: string) => Promise<string>;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  live = liveIpPolicies(call);
});

/** The body as sent: its made-up ipp_ IDs made policies of the account (one it lacks is 2216). */
async function sendable(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const policy = body.traffic_policy;
  return typeof policy === 'string' ? { ...body, traffic_policy: await live(policy) } : body;
}
afterAll(async () => {
  await server.close();
});

/** Creates the endpoint, checks the answer and the record read back; returns its ID. */
async function createAndCheck(c: CloudEndpointCase): Promise<string> {
  const r = await call('POST', '/endpoints', await sendable(createBody(c)));
  expect(r.status, `${manifestText(c)}\n-> ${r.text}`).toBe(201);
  const got = await call('GET', `/endpoints/${r.json.id}`);
  expect(got.text).toBe(r.text);
  expect(got.json).toMatchObject(expectedRecord(c));
  expect(parse(got.json.traffic_policy)).toEqual(
    parse(await live(JSON.stringify(resolvedPolicy(c)))),
  );
  return r.json.id as string;
}

/** The manifest's policy, its `{ env }` references read from `env`. */
function manifestPolicy(c: CloudEndpointCase, env: Record<string, string>): unknown {
  const doc = parse(manifestText(c)) as Record<string, unknown>;
  expect(doc.kind).toBe('CloudEndpoint');
  const policy = doc.traffic_policy;
  const read = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(read);
    if (typeof v !== 'object' || v === null) return v;
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === 'env') return env[(v as { env: string }).env];
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, read(x)]));
  };
  return typeof policy === 'string' ? parse(policy) : read(policy);
}

describe('generated cloud endpoints', () => {
  it('every body is taken and reads back equal; the manifest says the same', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(cloudEndpoint(), async (c) => {
        const env = envOf([c]);
        expect(manifestPolicy(c, env)).toEqual(resolvedPolicy(c));
        const id = await createAndCheck(c);
        expect((await call('DELETE', `/endpoints/${id}`)).status).toBe(204);
        seen.add(`${c.scheme} ${c.binding}`).add(c.policyAs);
      }),
      { numRuns: 100 },
    );
    // Every scheme with every binding it allows (4 public, 4 internal, 2 kubernetes), and every
    // way of writing the policy.
    expect(seen.size).toBe(13);
  }, 120_000);

  it('a generated set coexists in one account', async () => {
    await fc.assert(
      fc.asyncProperty(cloudEndpointSet({ maxLength: 5 }), async (cases) => {
        const ids: string[] = [];
        try {
          for (const c of cases) ids.push(await createAndCheck(c));
        } finally {
          for (const id of ids) await call('DELETE', `/endpoints/${id}`);
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('every single-fault mutation is refused with the code of the rule it breaks', async () => {
    const broken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(faultyCloudEndpoint(), async ({ case: c, fault }) => {
        const r = await call('POST', '/endpoints', await sendable(createBody(c)));
        const shown = `${fault.rule}\n${manifestText(c)}\n-> ${r.text}`;
        expect(r.status, shown).toBe(400);
        expect(r.json.error_code, shown).toBe(fault.code);
        expect(r.json.msg, shown).toContain(fault.path);
        broken.add(fault.rule);
      }),
      { numRuns: 150 },
    );
    expect([...broken].sort()).toEqual([...FAULT_RULES].sort());
  }, 120_000);

  it('the same faults sent as a PATCH of the valid endpoint are refused and change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(faultyCloudEndpoint(), async ({ original, case: c, fault }) => {
        const made = await call('POST', '/endpoints', await sendable(createBody(original)));
        expect(made.status, made.text).toBe(201);
        const before = await sendable(createBody(original));
        const changed = Object.fromEntries(
          Object.entries(await sendable(createBody(c))).filter(
            ([k, v]) => JSON.stringify(v) !== JSON.stringify(before[k]),
          ),
        );
        const r = await call('PATCH', `/endpoints/${made.json.id}`, changed);
        const shown = `${fault.rule}: ${JSON.stringify(changed).slice(0, 400)}\n-> ${r.text}`;
        expect(r.status, shown).toBe(400);
        expect(r.json.error_code, shown).toBe(fault.code);
        expect(r.json.msg, shown).toContain(fault.path);
        expect((await call('GET', `/endpoints/${made.json.id}`)).text).toBe(made.text);
        expect((await call('DELETE', `/endpoints/${made.json.id}`)).status).toBe(204);
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
