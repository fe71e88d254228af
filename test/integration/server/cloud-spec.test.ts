/**
 * The local server's cloud endpoints against the specification's tables
 * (test/helpers/cloud-spec.ts), over HTTP. Every case is derived from a row: each action in each
 * phase (taken iff the table lists the phase), each config field (valid values taken, each bound
 * taken and one step beyond it refused, wrong types and invalid values refused, required fields
 * required), the terminating column, the body fields of section 1 with their defaults and byte
 * bounds, every URL and binding row, and every rule with its code. A refusal is a 400 with the
 * row's code and a `msg` naming the path inside the document.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunningServer } from '../../../src/server/index.js';
import {
  type ActionRow,
  actionRow,
  CLOUD_SPEC,
  entryPhase,
  type FieldRow,
  INTERNAL_TARGET,
  type Phase,
  type RuleCase,
  type Scheme,
} from '../../helpers/cloud-spec.js';
import { liveIpPolicies } from '../../helpers/live-ip-policies.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor, type Reply } from './client.js';

const POLICY_CODE = CLOUD_SPEC.policyCode;
const { invalidValue, unknownField } = CLOUD_SPEC.bodyCodes;

let server: RunningServer & { apiKey: string };
let call: Call;
let counter = 0;
/** A fresh public host per case: the cases share one account and never collide. */
const host = () => `s${++counter}.example.com`;
const urlFor = (scheme: Scheme, internal = false) =>
  internal
    ? `${scheme}://${host().replace('.example.com', '.internal')}:${scheme === 'http' ? 80 : 443}`
    : scheme === 'tcp'
      ? `tcp://${host()}:9000`
      : scheme === 'tls'
        ? `tls://${host()}:443`
        : `${scheme}://${host()}`;

let live: (text: string) => Promise<string>;

beforeAll(async () => {
  server = await startTestServer();
  call = clientFor(server, server.apiKey);
  live = liveIpPolicies(call);
});
afterAll(async () => {
  await server.close();
});

const lastRule = (scheme: Scheme) => ({
  actions: [{ type: 'forward-internal', config: { url: INTERNAL_TARGET[scheme] } }],
});
/** A guarded rule every phase takes: the rule under test is never the first of its phase. */
const FILLER = {
  expressions: ["conn.client_ip == '10.0.0.1'"],
  actions: [{ type: 'set-vars', config: { vars: [{ filler: true }] } }],
};
const withConfig = (type: string, config: unknown) =>
  config === undefined ? { type } : { type, config };

/**
 * A policy with `actions` as the third rule of `phase` (after two fillers), and the scheme's
 * entry phase ending in a terminating rule. Returns it and the rule's path.
 */
function placed(scheme: Scheme, phase: Phase, actions: readonly unknown[]) {
  const entry = entryPhase(scheme);
  const policy: Record<string, unknown[]> = { [phase]: [FILLER, FILLER, { actions }] };
  if (phase === entry) policy[phase]?.push(lastRule(scheme));
  else policy[entry] = [lastRule(scheme)];
  return { policy, path: `${phase}[2]` };
}

async function createWith(
  scheme: Scheme,
  policy: unknown,
  extra: Record<string, unknown> = {},
  internal = false,
) {
  // Made-up ipp_ IDs become policies of the account (one it lacks is 2216).
  const text = await live(typeof policy === 'string' ? policy : stringify(policy));
  const r = await call('POST', '/endpoints', {
    url: urlFor(scheme, internal),
    traffic_policy: text,
    ...extra,
  });
  return { r, text };
}

function expectRefused(r: Reply, code: string, names: string): void {
  expect(r.status, r.text).toBe(400);
  expect(r.json.error_code, r.text).toBe(code);
  expect(r.json.msg, r.text).toContain(names);
}

function expectTaken(r: Reply): void {
  expect(r.status, r.text).toBe(201);
}

/** The phase a field is tested in: the request phase where the action runs there. */
function homePhase(row: ActionRow): Phase {
  return row.phases.includes('on_http_request') ? 'on_http_request' : (row.phases[0] as Phase);
}

describe('actions x phases (section 3)', () => {
  const cases = CLOUD_SPEC.actions.flatMap((row) =>
    (['https', 'tcp'] as const).flatMap((scheme) =>
      CLOUD_SPEC.phases[scheme].map((phase) => ({
        type: row.type,
        scheme,
        phase,
        taken: row.phases.includes(phase),
      })),
    ),
  );

  it.each(cases)('$type in $phase of a $scheme endpoint: taken $taken', async (c) => {
    const row = actionRow(c.type);
    const { policy, path } = placed(c.scheme, c.phase, [
      withConfig(c.type, row.minimal(c.phase, c.scheme)),
    ]);
    const { r, text } = await createWith(c.scheme, policy);
    if (c.taken) {
      expectTaken(r);
      // The record keeps the document as sent: no default is filled in.
      expect(r.json.traffic_policy).toBe(text);
    } else {
      expectRefused(r, 'ERR_SVC_2202', `traffic_policy: ${path}.actions[0].type:`);
    }
  });

  it.each(CLOUD_SPEC.actions.map((a) => a.type))(
    '%s refuses an unknown config field',
    async (type) => {
      const row = actionRow(type);
      const phase = homePhase(row);
      const config = { ...row.minimal(phase, 'https'), x_unknown: 1 };
      const { policy, path } = placed('https', phase, [{ type, config }]);
      expectRefused(
        (await createWith('https', policy)).r,
        'ERR_SVC_2203',
        `${path}.actions[0].config`,
      );
    },
  );
});

describe('the terminating column (section 3)', () => {
  /** forward-internal's default `on_error` (halt) is observable here: it ends the phase. */
  const variants = CLOUD_SPEC.actions.flatMap((row) => {
    if (row.terminating !== 'unless on_error: continue')
      return [{ type: row.type, onError: undefined, terminates: row.terminating }];
    return ([undefined, 'halt', 'continue'] as const).map((onError) => ({
      type: row.type,
      onError,
      terminates: onError !== 'continue',
    }));
  });
  const entries = variants.flatMap((v) =>
    (['https', 'tcp'] as const)
      .filter((scheme) => actionRow(v.type).phases.includes(entryPhase(scheme)))
      .map((scheme) => ({ ...v, scheme })),
  );
  const configOf = (type: string, phase: Phase, scheme: Scheme, onError: string | undefined) => {
    const minimal = actionRow(type).minimal(phase, scheme);
    return onError === undefined ? minimal : { ...minimal, on_error: onError };
  };

  it.each(entries)(
    '$type (on_error $onError) alone in the last rule of a $scheme endpoint: terminates $terminates',
    async (c) => {
      const entry = entryPhase(c.scheme);
      const action = withConfig(c.type, configOf(c.type, entry, c.scheme, c.onError));
      const { r } = await createWith(c.scheme, { [entry]: [FILLER, { actions: [action] }] });
      if (c.terminates) expectTaken(r);
      else expectRefused(r, 'ERR_SVC_2235', `traffic_policy: ${entry}[1]:`);
    },
  );

  const followed = variants.flatMap((v) =>
    actionRow(v.type).phases.map((phase) => ({ ...v, phase })),
  );
  it.each(followed)(
    '$type (on_error $onError) followed by an action in $phase: unreachable iff it terminates ($terminates)',
    async (c) => {
      const scheme: Scheme = 'https';
      const next = { type: 'set-vars', config: { vars: [] } };
      const action = withConfig(c.type, configOf(c.type, c.phase, scheme, c.onError));
      const { policy, path } = placed(scheme, c.phase, [action, next]);
      const { r } = await createWith(scheme, policy);
      if (c.terminates) expectRefused(r, 'ERR_SVC_2207', `traffic_policy: ${path}.actions[1]:`);
      else expectTaken(r);
    },
  );
});

interface FieldCase {
  readonly type: string;
  readonly field: string;
  readonly what: string;
  readonly value: unknown;
  readonly taken: boolean;
  /** The code of a refusal. */
  readonly code?: string;
}

/** Every case a field row yields: valid values, bounds, invalid values, a wrong type, absence. */
function fieldCases(row: ActionRow, f: FieldRow): FieldCase[] {
  const c = (what: string, value: unknown, taken: boolean, code?: string) => ({
    type: row.type,
    field: f.name,
    what,
    value,
    taken,
    ...(code === undefined ? {} : { code }),
  });
  const codes = f.codes ?? {};
  const out: FieldCase[] = f.valid.map((v) => c('valid', v, true));
  for (const v of f.invalid ?? [])
    out.push(c('invalid', v, false, codes.invalid ?? 'ERR_SVC_2204'));
  if (f.min !== undefined)
    out.push(
      c('at min', f.min.at, true),
      c('below min', f.min.beyond, false, codes.min ?? 'ERR_SVC_2215'),
    );
  if (f.max !== undefined)
    out.push(
      c('at max', f.max.at, true),
      c('above max', f.max.beyond, false, codes.max ?? 'ERR_SVC_2215'),
    );
  out.push(c('wrong type', f.wrongType, false, codes.wrongType ?? 'ERR_SVC_2203'));
  if (f.required === true) out.push(c('absent (required)', undefined, false, 'ERR_SVC_2234'));
  return out;
}

describe('config fields: values, bounds, types (section 3)', () => {
  const cases = CLOUD_SPEC.actions.flatMap((row) => row.fields.flatMap((f) => fieldCases(row, f)));
  const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 40);

  it.each(cases.map((c) => ({ ...c, shown: shown(c.value) })))(
    '$type config $field, $what $shown: taken $taken',
    async (c) => {
      const row = actionRow(c.type);
      const f = row.fields.find((x) => x.name === c.field) as FieldRow;
      const phase = homePhase(row);
      const config: Record<string, unknown> = { ...row.minimal(phase, 'https'), ...f.with };
      if (c.value === undefined) delete config[c.field];
      else config[c.field] = c.value;
      const { policy, path } = placed('https', phase, [{ type: c.type, config }]);
      const { r } = await createWith('https', policy);
      if (c.taken) expectTaken(r);
      else
        expectRefused(
          r,
          c.code ?? POLICY_CODE,
          `traffic_policy: ${path}.actions[0].config.${c.field}`,
        );
    },
  );

  it('the webhook providers are the 66 of api-notes.md plus jira, linear, orb', () => {
    const provider = actionRow('verify-webhook').fields.find((f) => f.name === 'provider');
    expect(new Set(provider?.valid).size).toBe(69);
  });
});

describe('rules and their codes (sections 2 and 3)', () => {
  const cases = CLOUD_SPEC.rules.flatMap((row) => row.cases.map((c) => ({ code: row.code, c })));

  it.each(cases.map((x) => ({ ...x, name: x.c.name })))('$code: $name', async ({ code, c }) => {
    await expectRuleCase(code, c);
  });
});

async function expectRuleCase(code: string, c: RuleCase): Promise<void> {
  if ('policy' in c) {
    const { r } = await createWith(c.scheme, c.policy, {}, c.internal === true);
    expectRefused(r, code, `traffic_policy: ${c.path}`);
    return;
  }
  if ('holderPools' in c) {
    const url = urlFor('https');
    const policy = { on_http_request: [lastRule('https')] };
    expectTaken((await createWith('https', policy, { url, pooling_enabled: c.holderPools })).r);
    const { r } = await createWith('https', policy, {
      url: url.toUpperCase(),
      pooling_enabled: c.newcomerPools,
    });
    expectRefused(r, code, `url ${url}`);
    return;
  }
  if ('patch' in c) {
    const made = await createWith('https', { on_http_request: [lastRule('https')] }, c.create);
    expectTaken(made.r);
    const r = await call('PATCH', `/endpoints/${made.r.json.id}`, c.patch);
    expectRefused(r, code, c.path);
    expect((await call('GET', `/endpoints/${made.r.json.id}`)).text).toBe(made.r.text);
    return;
  }
  const h = host();
  const edge = await call('POST', `/edges/${c.edge.kind}`, {
    hostports: [c.edge.hostport.replace('%h', h)],
  });
  expect(edge.status, edge.text).toBe(201);
  const url = c.url.replace('%h', h).replace('%H', h.toUpperCase());
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase() as Scheme;
  const policy = { [entryPhase(scheme)]: [lastRule(scheme)] };
  const refused = await createWith(scheme, policy, { url });
  expectRefused(refused.r, code, 'already reserved by an edge');
  expect((await call('DELETE', `/edges/${c.edge.kind}/${edge.json.id}`)).status).toBe(204);
  expectTaken((await createWith(scheme, policy, { url })).r);
}

describe('two endpoints on one URL (section 2, uniqueness)', () => {
  it.each(CLOUD_SPEC.sharing)('$name: both are accepted', async (c) => {
    const url = c.url.replace('%n', `share${++counter}`);
    const scheme = url.slice(0, url.indexOf(':')) as Scheme;
    const policy = { on_http_request: [lastRule(scheme)] };
    const holder = await createWith(scheme, policy, { url, ...c.holder });
    expectTaken(holder.r);
    const newcomer = await createWith(scheme, policy, { url: url.toUpperCase(), ...c.newcomer });
    expectTaken(newcomer.r);
    expect(newcomer.r.json.url).toBe(holder.r.json.url);
  });
});

describe('URLs and bindings (section 2)', () => {
  it.each(CLOUD_SPEC.urls.map((u) => ({ ...u, sent: u.bindings ?? 'default' })))(
    '$url bindings $sent',
    async (u) => {
      const scheme = (/^([a-z]+):\/\//i.exec(u.url)?.[1]?.toLowerCase() ?? 'https') as Scheme;
      const known = scheme in CLOUD_SPEC.phases ? scheme : 'https';
      const policy = stringify({ [entryPhase(known)]: [lastRule(known)] });
      const body = {
        url: u.url,
        traffic_policy: policy,
        ...(u.bindings ? { bindings: u.bindings } : {}),
      };
      const r = await call('POST', '/endpoints', body);
      if (u.stored === undefined) {
        const bindingCodes = ['ERR_SVC_18023', 'ERR_SVC_18018'];
        expectRefused(
          r,
          u.code as string,
          bindingCodes.includes(u.code ?? '') ? 'bindings:' : 'url:',
        );
        return;
      }
      expectTaken(r);
      expect(r.json).toMatchObject({
        url: u.stored.url,
        bindings: [u.stored.binding],
        scheme: known,
        port: u.stored.port,
      });
      expect(r.json.host).toBe(r.json.host.toLowerCase());
      const again = await call('POST', '/endpoints', { ...body, url: u.stored.url });
      expect(again.json.error_code, 'the normalised form is the same URL').toBe('ERR_SVC_18009');
    },
  );
});

describe('body fields (section 1)', () => {
  const policy = stringify({ on_http_request: [lastRule('https')] });
  const valid = () => ({ url: urlFor('https'), traffic_policy: policy });
  const rows = CLOUD_SPEC.body;

  it('answers the defaults and omits the fields without one', async () => {
    const r = await call('POST', '/endpoints', valid());
    expectTaken(r);
    for (const row of rows) {
      if (row.default !== undefined) expect(r.json[row.name], row.name).toEqual(row.default);
      else if (row.create === 'optional') expect(r.json, row.name).not.toHaveProperty(row.name);
    }
  });

  it.each(rows.filter((row) => row.create === 'required').map((row) => row.name))(
    'create without %s is refused',
    async (name) => {
      const body: Record<string, unknown> = valid();
      delete body[name];
      expectRefused(await call('POST', '/endpoints', body), invalidValue, name);
    },
  );

  it.each(rows.filter((row) => row.update === 'not accepted').map((row) => row.name))(
    'update with %s is refused as an unknown field',
    async (name) => {
      const made = await call('POST', '/endpoints', valid());
      const r = await call('PATCH', `/endpoints/${made.json.id}`, { [name]: 'cloud' });
      expectRefused(r, unknownField, name);
    },
  );

  const valueCases = rows.flatMap((row) => [
    ...row.valid.map((value) => ({ name: row.name, value, taken: true })),
    ...row.invalid.map((value) => ({ name: row.name, value, taken: false })),
    { name: row.name, value: row.wrongType, taken: false },
    ...(row.maxBytes === undefined
      ? []
      : [
          { name: row.name, value: twoByte(row.maxBytes), taken: true },
          {
            name: row.name,
            value: twoByte(row.maxBytes + 1),
            taken: false,
            code: row.tooLongCode,
          },
        ]),
  ]);
  const verbs = (['create', 'update'] as const).flatMap((verb) =>
    valueCases
      .filter(
        (c) => verb === 'create' || rows.find((r) => r.name === c.name)?.update === 'optional',
      )
      .map((c) => ({ ...c, verb, shown: JSON.stringify(c.value).slice(0, 30) })),
  );

  it.each(verbs)('$verb with $name $shown: taken $taken', async (c) => {
    let r: Reply;
    if (c.verb === 'create')
      r = await call('POST', '/endpoints', { ...valid(), [c.name]: c.value });
    else {
      const made = await call('POST', '/endpoints', valid());
      r = await call('PATCH', `/endpoints/${made.json.id}`, { [c.name]: c.value });
    }
    if (!c.taken) {
      expectRefused(r, ('code' in c && c.code) || invalidValue, c.name);
      return;
    }
    expect(r.status, r.text).toBe(c.verb === 'create' ? 201 : 200);
    const row = rows.find((x) => x.name === c.name);
    const empty = c.value === '' || (Array.isArray(c.value) && c.value.length === 0);
    expect(r.json[c.name]).toEqual(empty ? row?.default : c.value);
  });
});

/** `bytes` bytes of UTF-8 made of two-byte characters: the limits count bytes, not characters. */
function twoByte(bytes: number): string {
  return `${'é'.repeat(Math.floor(bytes / 2))}${bytes % 2 === 1 ? 'x' : ''}`;
}
