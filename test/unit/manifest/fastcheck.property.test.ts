/**
 * The shape check's fast path (`fastCheck`) against zod, the reference: wherever the fast path
 * answers, zod accepts the document and returns a strictly equal value with the same key order;
 * where zod rejects, the fast path never answers; and every valid document made only of the
 * modules it covers gets an answer (otherwise the fast path could quietly stop being taken and
 * every test would still pass).
 *
 * Every field is described once, by values that are valid and values that are not (`Field`).
 * Whole documents draw mostly valid values, so that many pass and their values are compared;
 * "one field at a time" documents set a single field, valid or not, in an otherwise minimal
 * valid document, so that each check is crossed often (a rare combination in a whole document
 * would be found by chance only).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastCheck } from '../../../src/manifest/fastcheck.js';
import { type Kind, SCHEMA_BY_KIND } from '../../../src/manifest/schema.js';
import { compiledCheck } from '../../../src/manifest/shape.js';

type Doc = Record<string, unknown>;

/** A field: values zod accepts, and values it rejects (alone or with the rest of their list). */
interface Field {
  readonly valid: fc.Arbitrary<unknown>;
  readonly invalid: fc.Arbitrary<unknown>;
}
type Fields = Readonly<Record<string, Field>>;

/** Mappings as the YAML readers make them: plain objects. */
const dict = (key: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>, maxKeys = 3) =>
  fc.dictionary(key, value, { maxKeys, noNullPrototype: true });
const junk = fc.constantFrom<unknown>(null, 1, -0, 0.5, 'x', '', true, [], {}, ['x'], { a: 1 });
const field = (valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>): Field => ({
  valid,
  invalid,
});
const pick = (...values: unknown[]) => fc.constantFrom(...values);
const keys = (...names: string[]) => fc.constantFrom(...names);

/** A list of distinct valid entries; or one with a bad entry, a repeat, or no list at all. */
function list(valid: readonly string[], invalid: readonly string[], minLength = 0): Field {
  return field(
    fc.uniqueArray(fc.constantFrom(...valid), { minLength, maxLength: 3 }),
    fc.oneof(
      fc.array(fc.constantFrom(...valid, ...invalid), { minLength: 1, maxLength: 3 }),
      fc.constant([valid[0], valid[0]]),
      junk,
    ),
  );
}
const uint = (min: number, max: number) =>
  field(
    fc.oneof(pick(min, max), fc.integer({ min, max })),
    pick(
      min - 1,
      max + 1,
      0.5,
      '5',
      null,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      ...(min > 0 ? [-0] : []),
    ),
  );
const enabled = field(fc.boolean(), junk);
const boolean = field(fc.boolean(), junk);
const labels = field(
  dict(keys('team', 'a/b', 'x.y-z', 'A1'), pick('web', '', 'é')),
  fc.oneof(dict(keys('Bad Key', '_x', 'x'.repeat(129)), pick('v')), dict(keys('team'), junk), junk),
);
const description = field(
  pick('A service', '', 'x'.repeat(255), 'é'.repeat(127)),
  pick('é'.repeat(128), 7, null),
);
/** JSON values as a YAML reader makes them (plain objects). */
const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

// ---- modules: their fields, and values for the required ones --------------------------------

interface ModuleSpec {
  readonly fields: Fields;
  readonly required?: Doc;
}
const MODULES: Readonly<Record<string, ModuleSpec>> = {
  backend: {
    fields: {
      enabled,
      backend_id: field(pick('bkdhr_1', 'bkd_x9', 'bkdtg_abc'), pick('bkd1', 'x', 3)),
    },
    required: { backend_id: 'bkdhr_1' },
  },
  ip_restriction: {
    fields: { enabled, ip_policy_ids: list(['ipp_1', 'ipp_2', 'ipp_abc'], ['bad', 'ipp_'], 1) },
    required: { ip_policy_ids: ['ipp_1'] },
  },
  mutual_tls: {
    fields: { enabled, certificate_authority_ids: list(['ca_1', 'ca_2'], ['x', 'ca_']) },
    required: { certificate_authority_ids: [] },
  },
  tls_termination: {
    fields: {
      enabled,
      terminate_at: field(pick('edge', 'agent', 'upstream'), pick('Edge', '', 1)),
      min_version: field(pick('1.0', '1.1', '1.2', '1.3'), pick('2.0', 1.2, '')),
    },
  },
  traffic_policy: {
    fields: {
      enabled,
      value: field(
        fc.oneof(fc.string(), dict(fc.string(), json, 4)),
        fc.oneof(
          junk,
          fc.constant({ on_tcp_connect: [{ n: Number.POSITIVE_INFINITY }] }),
          fc.constant([1]),
        ),
      ),
    },
    required: { value: 'on_http_request: []' },
  },
  circuit_breaker: {
    fields: {
      enabled,
      tripped_duration: uint(1, 4_294_967_295),
      rolling_window: uint(1, 4_294_967_295),
      num_buckets: uint(1, 128),
      volume_threshold: uint(0, 4_294_967_295),
      error_threshold_percentage: field(
        fc.oneof(pick(0, -0, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
        pick(1.5, -0.1, Number.NaN, Number.POSITIVE_INFINITY, '0.5'),
      ),
    },
  },
  compression: { fields: { enabled } },
  websocket_tcp_converter: { fields: { enabled } },
  request_headers: {
    fields: {
      enabled,
      add: field(
        dict(keys('X-A', 'x-b', 'Strict-Transport-Security', '1x'), pick('v', '', 'max-age=1')),
        fc.oneof(
          dict(keys('bad header', '_x', 'X-A'), pick('v')),
          dict(keys('X-A'), pick('a\nb', 'x\u007f', 3)),
          junk,
        ),
      ),
      remove: list(['Server', 'Cookie', 'X-Y'], ['bad header', '', 'server', 'COOKIE']),
    },
  },
  webhook_verification: {
    fields: {
      enabled,
      provider: field(pick('stripe', 'GitHub', 'SNS', 'whatever'), pick('', 3)),
      secret: field(pick('s', '', 'é'), junk),
    },
    required: { provider: 'stripe' },
  },
};
/** The response headers module is the request headers module. */
const HEADERS = MODULES.request_headers as ModuleSpec;

const PROVIDER: Fields = {
  client_id: field(pick('cid', 'é'), pick('', 1)),
  client_secret: field(pick('s3cret'), pick('', null)),
  scopes: list(['openid', 'email'], ['']),
  email_addresses: list(['a@example.com', 'b@example.com'], ['A@example.com', '']),
  email_domains: list(['example.com', 'example.org'], ['Example.com', '']),
};
const GITHUB: Fields = {
  ...PROVIDER,
  teams: list(['org/team', 'org/other'], ['bad', 'a/b/c', 'a /b', '']),
  organizations: list(['org', 'other'], ['']),
};
const OAUTH: Fields = {
  enabled,
  options_passthrough: boolean,
  cookie_prefix: field(pick('svc.', 'A1', ''), pick('bad prefix', 'x_y', 3)),
  inactivity_timeout: uint(0, 4_294_967_295),
  maximum_duration: uint(0, 4_294_967_295),
  auth_check_interval: uint(0, 4_294_967_295),
};

// ---- arbitraries -------------------------------------------------------------------------------

/** Valid `weight` times for each time not. */
const mostly = (f: Field, weight: number) =>
  fc.oneof({ weight, arbitrary: f.valid }, { weight: 1, arbitrary: f.invalid });

/** A mapping of some of `fields` (all of `required`), now and then with a field nobody knows. */
function mapping(fields: Fields, weight: number, required: Doc = {}): fc.Arbitrary<Doc> {
  const record = fc.record(
    Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, mostly(f, weight)])),
    { requiredKeys: [], noNullPrototype: true },
  );
  const extra = mostly(field(fc.constant(null), pick('unknown_field', 'Enabled')), weight);
  return fc.tuple(record, extra).map(([value, key]) => ({
    ...required,
    ...value,
    ...(key === null ? {} : { [key as string]: 1 }),
  }));
}

const moduleOf = (spec: ModuleSpec, weight: number) => mapping(spec.fields, weight, spec.required);
const asField = (arbitrary: fc.Arbitrary<unknown>): Field => field(arbitrary, junk);

function oauthModule(weight: number): fc.Arbitrary<Doc> {
  const settings = mapping(PROVIDER, weight);
  const provider = mapping(
    {
      github: asField(mapping(GITHUB, weight)),
      google: asField(settings),
      gitlab: asField(settings),
    },
    weight,
  );
  return fc
    .tuple(mostly(asField(provider), weight), mapping(OAUTH, weight))
    .map(([p, rest]) => ({ provider: p, ...rest }));
}

const ROUTE: Fields = {
  match_type: field(pick('exact_path', 'path_prefix'), pick('exact', '', 1)),
  match: field(pick('/', '/a', '/hooks/x'), pick('a', '', 1)),
};
const EDGE: Fields = {
  name: field(pick('a', 'edge-1', 'web.x_y'), pick('Bad Name', '', '-a', 5)),
  description,
  metadata: labels,
  protect: boolean,
  suspend: boolean,
  hostports: list(
    ['a.example.com:443', 'b.example.com:443', '10.0.0.1:8080', '*.example.com:443'],
    ['A.example.com:443', 'x', 'a.example.com:80', '10.0.0.1:70000'],
  ),
};

/** Whole documents, every field drawn (valid `weight` times for each time not). */
function documents(weight: number, rare: boolean) {
  const module = (name: string) => asField(moduleOf(MODULES[name] as ModuleSpec, weight));
  const route = mapping(
    {
      ...ROUTE,
      description,
      metadata: labels,
      backend: module('backend'),
      ip_restriction: module('ip_restriction'),
      circuit_breaker: module('circuit_breaker'),
      compression: module('compression'),
      request_headers: asField(moduleOf(HEADERS, weight)),
      response_headers: asField(moduleOf(HEADERS, weight)),
      webhook_verification: module('webhook_verification'),
      oauth: asField(oauthModule(weight)),
      websocket_tcp_converter: module('websocket_tcp_converter'),
      traffic_policy: module('traffic_policy'),
      ...(rare
        ? {
            saml: asField(fc.constant({ idp_metadata: '<xml/>' })),
            user_agent_filter: asField(fc.constant({ allow: ['(?i)curl'] })),
          }
        : {}),
    },
    weight,
    { match_type: 'path_prefix', match: '/' },
  );
  const tls = mapping(
    {
      ...EDGE,
      id: field(pick('edgtls_1', 'edgtls_abcXYZ9'), pick('edghts_1', 'x')),
      backend: module('backend'),
      ip_restriction: module('ip_restriction'),
      mutual_tls: module('mutual_tls'),
      tls_termination: module('tls_termination'),
      traffic_policy: module('traffic_policy'),
    },
    weight,
    { kind: 'TLSEdge', name: 'a' },
  );
  const https = mapping(
    {
      ...EDGE,
      id: field(pick('edghts_1'), pick('edgtls_1')),
      mutual_tls: module('mutual_tls'),
      tls_termination: asField(
        mapping(
          { enabled, min_version: MODULES.tls_termination?.fields.min_version as Field },
          weight,
        ),
      ),
      routes: field(fc.array(route, { maxLength: 3 }), junk),
    },
    weight,
    { kind: 'HTTPSEdge', name: 'a' },
  );
  const bot = mapping(
    {
      name: field(pick('ci', 'deploy-bot'), pick('', 'CI')),
      active: boolean,
      ensure: field(pick('present', 'absent'), pick('gone', 1)),
      suspend: boolean,
    },
    weight,
    { kind: 'BotUser', name: 'ci' },
  );
  return fc.oneof(tls, https, bot);
}

/** One field, valid or not (as often), in an otherwise minimal valid document. */
function oneFieldAtATime(): fc.Arbitrary<Doc> {
  const either = (f: Field) => fc.oneof(f.valid, f.invalid);
  const places: fc.Arbitrary<Doc>[] = [];
  const inRoute = (route: Doc): Doc => ({
    kind: 'HTTPSEdge',
    name: 'a',
    routes: [{ match_type: 'path_prefix', match: '/', ...route }],
  });
  for (const [name, spec] of Object.entries({ ...MODULES, response_headers: HEADERS })) {
    for (const [key, f] of Object.entries(spec.fields)) {
      // Every place a module may stand (and some it may not: both must reject there).
      const value = either(f).map((v) => ({ [name]: { ...spec.required, [key]: v } }));
      places.push(
        value.map(inRoute),
        value.map((m) => ({ kind: 'TLSEdge', name: 'a', ...m })),
      );
      places.push(value.map((m) => ({ kind: 'HTTPSEdge', name: 'a', ...m })));
    }
  }
  const oauth = (provider: Doc, rest: Doc = {}) => inRoute({ oauth: { provider, ...rest } });
  for (const [key, f] of Object.entries(OAUTH))
    places.push(either(f).map((v) => oauth({}, { [key]: v })));
  for (const [key, f] of Object.entries(PROVIDER))
    places.push(either(f).map((v) => oauth({ google: { [key]: v } })));
  for (const [key, f] of Object.entries(GITHUB))
    places.push(either(f).map((v) => oauth({ github: { [key]: v } })));
  places.push(junk.map((p) => oauth(p as Doc)));
  places.push(keys('okta', 'GitHub', 'google').map((name) => oauth({ [name]: {} })));
  for (const [key, f] of Object.entries(ROUTE))
    places.push(either(f).map((v) => inRoute({ [key]: v })));
  for (const [key, f] of Object.entries(EDGE)) {
    places.push(either(f).map((v) => ({ kind: 'TLSEdge', name: 'a', [key]: v })));
    places.push(either(f).map((v) => ({ kind: 'HTTPSEdge', name: 'a', [key]: v })));
  }
  for (const key of ['description', 'metadata'] as const) {
    places.push(either(EDGE[key] as Field).map((v) => inRoute({ [key]: v })));
  }
  places.push(junk.map((routes) => ({ kind: 'HTTPSEdge', name: 'a', routes })));
  places.push(junk.map((route) => ({ kind: 'HTTPSEdge', name: 'a', routes: [route] })));
  return fc.oneof(...places);
}

const wholeDocuments = documents(40, true);
const coveredDocuments = documents(40, false);
const singleFields = oneFieldAtATime();

function zodOf(doc: Doc) {
  return compiledCheck(doc.kind as Kind).safeParse(doc);
}

/** The property all documents hold: an answer is zod's own value; no answer where zod rejects. */
function agrees(doc: Doc): boolean {
  const fast = fastCheck(doc.kind as Kind, doc);
  const reference = zodOf(doc);
  if (fast === undefined) return !reference.success;
  expect(reference.success).toBe(true);
  expect(fast).toStrictEqual(reference.data);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(reference.data));
  return true;
}

describe('fastCheck', () => {
  it('agrees with zod on whole documents', () => {
    let answered = 0;
    fc.assert(
      fc.property(wholeDocuments, (doc) => {
        // False only for a document zod takes that the fast path leaves to it (saml, ...).
        agrees(doc);
        if (fastCheck(doc.kind as Kind, doc) !== undefined) answered += 1;
      }),
      { numRuns: 4000 },
    );
    // Enough answers for the comparison to mean something.
    expect(answered).toBeGreaterThan(800);
  });

  it('agrees with zod one field at a time', () => {
    let rejected = 0;
    fc.assert(
      fc.property(singleFields, (doc) => {
        expect(agrees(doc)).toBe(true);
        if (!zodOf(doc).success) rejected += 1;
      }),
      { numRuns: 20_000 },
    );
    expect(rejected).toBeGreaterThan(5000);
  });

  it('answers every valid document made of the modules it covers', () => {
    let valid = 0;
    fc.assert(
      fc.property(coveredDocuments, (doc) => {
        if (!zodOf(doc).success) return;
        valid += 1;
        expect(fastCheck(doc.kind as Kind, doc)).toBeDefined();
      }),
      { numRuns: 4000 },
    );
    expect(valid).toBeGreaterThan(800);
  });

  it('leaves saml, oidc, user_agent_filter and __proto__ keys to zod', () => {
    const route = { match_type: 'path_prefix', match: '/' };
    for (const extra of [
      { saml: { idp_metadata: '<xml/>' } },
      { oidc: { issuer: 'https://id.example.com', client_id: 'c', client_secret: 's' } },
      { user_agent_filter: { allow: ['curl'] } },
      { traffic_policy: { value: JSON.parse('{"__proto__": {"a": 1}}') } },
    ]) {
      const doc = { kind: 'HTTPSEdge', name: 'a', routes: [{ ...route, ...extra }] };
      expect(SCHEMA_BY_KIND.HTTPSEdge.safeParse(doc).success).toBe(true);
      expect(fastCheck('HTTPSEdge', doc)).toBeUndefined();
    }
  });

  it('answers only for the kind it is asked about, and for plain mappings', () => {
    const plain = { kind: 'TLSEdge', name: 'a' };
    expect(fastCheck('HTTPSEdge', plain)).toBeUndefined();
    expect(fastCheck('TLSEdge', Object.assign(Object.create(null), plain))).toBeUndefined();
    expect(fastCheck('TLSEdge', { ...plain, hostports: undefined })).toBeUndefined();
    expect(fastCheck('TLSEdge', plain)).toStrictEqual({
      kind: 'TLSEdge',
      name: 'a',
      metadata: {},
      protect: false,
      hostports: [],
    });
  });
});
