/**
 * The local server (its own schemas, the independent oracle) held to the module definitions
 * (src/hosted/modules/): for every module of every owner, over HTTP, the server accepts the
 * definition's example, fills every default the definition states, refuses an unknown field,
 * refuses a body without each required field, and accepts each field's valid probes (the
 * bounds, the enumeration members) and refuses its invalid ones (one past each bound, a wrong
 * type, a stranger). Valid probes must also pass the manifest schema and the client's write
 * schema, so neither refuses what the service takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODULES, type ModuleDefinition } from '../../../src/hosted/modules/index.js';
import { canonicalModule, liveModuleToWrite } from '../../../src/plan/normalize.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

let server: RunningServer & { apiKey: string };
let call: Call;
let hostCount = 0;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
});
afterAll(async () => {
  await server.close();
});

type Owner = keyof typeof MODULES;

/** A fresh owner of the kind (its own edge: at most one route per edge may carry auth). */
async function ownerPath(owner: Owner): Promise<string> {
  hostCount += 1;
  const hostports = [`m${hostCount}.example.com:443`];
  if (owner === 'tls_edge') {
    const edge = await call('POST', '/edges/tls', { hostports });
    return `/edges/tls/${edge.json.id}`;
  }
  const edge = await call('POST', '/edges/https', { hostports });
  if (owner === 'https_edge') return `/edges/https/${edge.json.id}`;
  const route = await call('POST', `/edges/https/${edge.json.id}/routes`, {
    match_type: 'path_prefix',
    match: '/',
  });
  return `/edges/https/${edge.json.id}/routes/${route.json.id}`;
}

function without(body: Readonly<Record<string, unknown>>, field: string): Record<string, unknown> {
  const { [field]: _, ...rest } = body;
  return rest;
}

/**
 * Whether `field` reads back as `sent`, in the planner's eyes: both sides in canonical form
 * (Refs as IDs, zero values dropped, lists as sets, names compared lower-cased).
 */
function readsBackAs(module: string, reply: unknown, field: string, sent: unknown) {
  const live = liveModuleToWrite(module, reply)?.[field];
  expect(canonicalModule(module, { [field]: live })?.[field], field).toEqual(
    canonicalModule(module, { [field]: sent })?.[field],
  );
}

const cases = Object.entries(MODULES).flatMap(([owner, modules]) =>
  Object.entries(modules).map(
    ([name, def]) => [owner as Owner, name, def as ModuleDefinition] as const,
  ),
);

describe.each(cases)('%s %s', (owner, name, def) => {
  let path = '';
  const put = (body: unknown) => call('PUT', path, body);

  beforeAll(async () => {
    path = `${await ownerPath(owner)}/${name}`;
  });

  it('accepts the example and stores every default the definition states', async () => {
    const reply = await put(def.example);
    expect(reply.status, reply.text).toBe(200);
    for (const [field, f] of Object.entries(def.fields)) {
      if (f.default === undefined || field in def.example) continue;
      if (f.defaultWhen !== undefined && !f.defaultWhen(def.example)) continue;
      expect(reply.json[field], field).toEqual(f.default);
    }
    for (const [field, value] of Object.entries(def.example)) {
      readsBackAs(name, reply.json, field, value);
    }
  });

  it('refuses a field the definition does not have', async () => {
    expect((await put({ ...def.example, no_such_field: 1 })).status).toBe(400);
  });

  const required = Object.entries(def.fields).filter(
    ([, f]) => f.presence === 'required' || f.serviceRequired !== undefined,
  );
  it.each(required)('refuses a body without %s', async (field, f) => {
    const reply = await put(without(def.example, field));
    expect(reply.status).toBe(400);
    // A field the service needs though the write shape leaves it out: refused with its own code.
    if (f.serviceRequired !== undefined) expect(reply.json.error_code).toBe(f.serviceRequired);
  });

  const probes = (which: 'valid' | 'invalid') =>
    Object.entries(def.fields).flatMap(([field, f]) =>
      f.probes[which].map((value) => [field, JSON.stringify(value), value] as const),
    );

  it.each(probes('valid'))('accepts %s: %s', async (field, _shown, value) => {
    const body = { ...def.example, [field]: value };
    const reply = await put(body);
    expect(reply.status, reply.text).toBe(200);
    readsBackAs(name, reply.json, field, value);
    expect(def.write.safeParse(body).success, 'the client write schema').toBe(true);
    expect(def.manifest.safeParse(body).success, 'the manifest schema').toBe(true);
  });

  it.each(probes('invalid'))('refuses %s: %s', async (field, _shown, value) => {
    const reply = await put({ ...def.example, [field]: value });
    expect(reply.status, reply.text).toBe(400);
  });
});
