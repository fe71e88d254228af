/**
 * Property: any valid manifest set, printed to YAML with `yaml.stringify`, loads to the model
 * the schemas give for it; both parsers (fast and full) agree; and the loaded model, printed
 * back, loads to itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  hasControlCharacter,
  isValidUserAgentPattern,
  MATCH_TYPES,
  NAMEID_FORMATS,
  OAUTH_PROVIDERS,
  TLS_VERSIONS,
} from '../../../src/hosted/edge-api.js';
import { AUTH_MODULES } from '../../../src/hosted/modules/index.js';
import {
  BotUserSchema,
  type DesiredSet,
  HttpsEdgeSchema,
  TlsEdgeSchema,
} from '../../../src/manifest/schema.js';
import { buildFrom } from './helpers.js';

const name = fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,8}[a-z0-9])?$/);
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '1.3',
    'true',
    'null',
    '~',
    '- x',
    'a: b',
    '#c',
    ' lead',
    'trail ',
    "it's",
    '"q"',
    '',
    '0x1F',
    '1e3',
    'multi\nline\n',
  ),
);
const nonEmpty = text.filter((s) => s !== '');
/** User-agent patterns must be regular expressions the server accepts. */
const userAgentPattern = nonEmpty.filter(isValidUserAgentPattern);
const idBody = fc.stringMatching(/^[A-Za-z0-9]{1,27}$/);
const labels = fc.dictionary(fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,6}[a-z0-9])?$/), text, {
  maxKeys: 3,
});
const uint32 = fc.integer({ min: 0, max: 4_294_967_295 });
const positive = fc.integer({ min: 1, max: 4_294_967_295 });
const enabled = fc.option(fc.boolean(), { nil: undefined });

/** Drops keys whose value is undefined (optional fields not written). */
function compact<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const uniqueStrings = (a: fc.Arbitrary<string>, max = 3) => fc.uniqueArray(a, { maxLength: max });

const backend = fc.record({ enabled, backend_id: idBody.map((b) => `bkdhr_${b}`) }).map(compact);
const ipRestriction = fc
  .record({
    enabled,
    ip_policy_ids: fc.uniqueArray(
      idBody.map((b) => `ipp_${b}`),
      { minLength: 1, maxLength: 3 },
    ),
  })
  .map(compact);
const mutualTls = fc
  .record({ enabled, certificate_authority_ids: uniqueStrings(idBody.map((b) => `ca_${b}`)) })
  .map(compact);
const trafficPolicy = fc
  .record({
    enabled,
    value: fc.oneof(
      text,
      // A `__proto__` key anywhere is refused by the loader (src/manifest/refs.ts), by design.
      fc
        .dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), fc.jsonValue({ maxDepth: 2 }), {
          maxKeys: 3,
        })
        .filter((v) => !JSON.stringify(v).includes('"__proto__"')),
    ),
  })
  .map(compact);
const session = {
  options_passthrough: opt(fc.boolean()),
  cookie_prefix: opt(fc.stringMatching(/^[A-Za-z0-9.]{0,8}$/)),
  inactivity_timeout: opt(uint32),
  maximum_duration: opt(uint32),
};
const email = fc.stringMatching(/^[a-z0-9]{1,6}@[a-z]{1,6}\.com$/);
const oauth = fc
  .record({
    provider: fc.constantFrom(...OAUTH_PROVIDERS),
    own: fc.boolean(),
    client_id: nonEmpty,
    client_secret: nonEmpty,
    scopes: opt(uniqueStrings(nonEmpty)),
    email_addresses: opt(uniqueStrings(email)),
    organizations: opt(uniqueStrings(nonEmpty)),
    enabled,
    ...session,
    auth_check_interval: opt(uint32),
  })
  .map(
    ({
      provider,
      own,
      client_id,
      client_secret,
      scopes,
      email_addresses,
      organizations,
      ...rest
    }) =>
      compact({
        ...rest,
        provider: {
          [provider]: compact({
            ...(own ? { client_id, client_secret, scopes } : {}),
            email_addresses,
            ...(provider === 'github' ? { organizations } : {}),
          }),
        },
      }),
  );
const saml = fc
  .record({
    enabled,
    ...session,
    idp_metadata: nonEmpty,
    force_authn: opt(fc.boolean()),
    allow_idp_initiated: opt(fc.boolean()),
    authorized_groups: opt(uniqueStrings(nonEmpty)),
    nameid_format: opt(fc.constantFrom(...NAMEID_FORMATS)),
  })
  .map(compact);
const oidc = fc
  .record({
    enabled,
    ...session,
    issuer: fc.webUrl(),
    client_id: nonEmpty,
    client_secret: nonEmpty,
    scopes: opt(uniqueStrings(nonEmpty)),
  })
  .map(compact);
const headerName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,8}$/);
const headers = fc
  .record({
    enabled,
    add: opt(
      fc
        .uniqueArray(
          fc.tuple(
            headerName,
            text.filter((v) => !hasControlCharacter(v)),
          ),
          {
            selector: ([k]) => k.toLowerCase(),
            maxLength: 3,
          },
        )
        .map((e) => Object.fromEntries(e)),
    ),
    remove: opt(fc.uniqueArray(headerName, { selector: (k) => k.toLowerCase(), maxLength: 3 })),
  })
  .map(compact);
const webhook = fc.oneof(
  fc.record({ enabled, provider: fc.constantFrom('sns', 'SNS') }).map(compact),
  fc
    .record({ enabled, provider: fc.constantFrom('stripe', 'GitHub', 'slack'), secret: nonEmpty })
    .map(compact),
);
const circuitBreaker = fc
  .record({
    enabled,
    // Every field the service needs (a partial circuit breaker is refused).
    tripped_duration: positive,
    rolling_window: positive,
    num_buckets: fc.integer({ min: 1, max: 128 }),
    volume_threshold: positive,
    error_threshold_percentage: opt(fc.double({ min: 0, max: 1, noNaN: true })),
  })
  .map(compact);

const route = fc
  .record({
    match_type: fc.constantFrom(...MATCH_TYPES),
    description: opt(text),
    metadata: opt(labels),
    backend: opt(backend),
    ip_restriction: opt(ipRestriction),
    circuit_breaker: opt(circuitBreaker),
    compression: opt(fc.record({ enabled }).map(compact)),
    request_headers: opt(headers),
    response_headers: opt(headers),
    webhook_verification: opt(webhook),
    auth: opt(
      fc.oneof(
        oauth.map((v) => ({ oauth: v })),
        saml.map((v) => ({ saml: v })),
        oidc.map((v) => ({ oidc: v })),
      ),
    ),
    websocket_tcp_converter: opt(fc.record({ enabled }).map(compact)),
    user_agent_filter: opt(
      fc
        .record({
          enabled,
          allow: opt(uniqueStrings(userAgentPattern)),
          deny: opt(uniqueStrings(userAgentPattern)),
        })
        .map(compact),
    ),
    traffic_policy: opt(trafficPolicy),
  })
  .map(({ auth, ...rest }) => compact({ ...rest, ...(auth ?? {}) }));

const edgeCommon = {
  description: opt(text),
  metadata: opt(labels),
  protect: opt(fc.boolean()),
};
const tlsEdge = fc
  .record({
    ...edgeCommon,
    id: opt(idBody.map((b) => `edgtls_${b}`)),
    backend: opt(backend),
    ip_restriction: opt(ipRestriction),
    mutual_tls: opt(mutualTls),
    tls_termination: opt(
      fc.oneof(
        fc.record({ enabled, terminate_at: fc.constant('upstream') }).map(compact),
        fc
          .record({
            enabled,
            terminate_at: opt(fc.constantFrom('edge', 'agent')),
            min_version: opt(fc.constantFrom(...TLS_VERSIONS)),
          })
          .map(compact),
      ),
    ),
    traffic_policy: opt(trafficPolicy),
  })
  .map((v) => {
    // mutual_tls needs TLS terminated at the edge.
    const out = compact(v);
    if (
      (out.tls_termination as { terminate_at?: string } | undefined)?.terminate_at === 'upstream'
    ) {
      delete out.mutual_tls;
    }
    return { kind: 'TLSEdge', ...out };
  });
const httpsEdge = fc
  .record({
    ...edgeCommon,
    id: opt(idBody.map((b) => `edghts_${b}`)),
    mutual_tls: opt(mutualTls),
    tls_termination: opt(
      fc.record({ enabled, min_version: opt(fc.constantFrom(...TLS_VERSIONS)) }).map(compact),
    ),
    routes: fc.uniqueArray(fc.tuple(fc.stringMatching(/^\/[a-z0-9/_-]{0,8}$/), route), {
      selector: ([m]) => m,
      maxLength: 3,
    }),
  })
  .map(({ routes, ...v }) => ({
    kind: 'HTTPSEdge',
    ...compact(v),
    // At most one route of an edge may carry an auth module: later ones lose theirs.
    routes: routes.map(([match, r], i) => {
      const out: Record<string, unknown> = { match, ...r };
      const earlier = routes.slice(0, i).some(([, p]) => AUTH_MODULES.some((m) => m in p));
      if (earlier) for (const m of AUTH_MODULES) delete out[m];
      return out;
    }),
  }));
const botUser = fc
  .record({ active: opt(fc.boolean()), ensure: opt(fc.constantFrom('present', 'absent')) })
  .map((v) => ({ kind: 'BotUser', ...compact(v) }));

/** A valid set: names unique per kind, hostports and adopted IDs unique, spread over files. */
const manifestSet = fc
  .record({
    docs: fc.array(
      fc.tuple(fc.oneof(tlsEdge, httpsEdge, botUser), name, fc.integer({ min: 0, max: 2 })),
      { maxLength: 6 },
    ),
    // Domain names on port 443, IP addresses on any port (the service's rule).
    hostports: fc.uniqueArray(
      fc.oneof(
        fc.stringMatching(/^[a-z]{1,6}\.example\.com:443$/),
        fc.stringMatching(/^10\.0\.[0-9]\.[1-9]:[1-9][0-9]{0,3}$/),
      ),
      { maxLength: 12 },
    ),
  })
  .map(({ docs, hostports }) => {
    const names = new Set<string>();
    const ids = new Set<string>();
    let next = 0;
    const files: Record<string, unknown>[][] = [[], [], []];
    for (const [doc, n, file] of docs) {
      const key = `${doc.kind}/${n}`;
      if (names.has(key)) continue;
      names.add(key);
      const out: Record<string, unknown> = { ...doc, name: n };
      if ('id' in out && typeof out.id === 'string') {
        if (ids.has(out.id)) delete out.id;
        else ids.add(out.id);
      }
      if (doc.kind !== 'BotUser') {
        out.hostports = hostports.slice(next, next + 2);
        next += 2;
      }
      files[file]?.push(out);
    }
    return files;
  });

function toFiles(files: Record<string, unknown>[][]): Record<string, string> {
  const out: Record<string, string> = {};
  files.forEach((docs, i) => {
    if (docs.length > 0) out[`dir${i}/m${i}.yaml`] = docs.map((d) => stringify(d)).join('---\n');
  });
  return out;
}

type Loose = Record<string, unknown>;
/** The model without loader annotations, as a plain document a user could write. */
function strip(set: DesiredSet): Loose[] {
  const all: Loose[] = [...set.tlsEdges, ...set.httpsEdges, ...set.botUsers].map((r) => {
    const { source: _s, sensitive: _x, ...rest } = r as unknown as Loose;
    if (Array.isArray(rest.routes)) {
      rest.routes = (rest.routes as Loose[]).map(
        ({ source: _a, sensitive: _b, ...route }) => route,
      );
    }
    return rest;
  });
  return all;
}

const SCHEMAS = {
  TLSEdge: TlsEdgeSchema,
  HTTPSEdge: HttpsEdgeSchema,
  BotUser: BotUserSchema,
} as const;
function sortByKindAndName(docs: Loose[]): Loose[] {
  const order = ['TLSEdge', 'HTTPSEdge', 'BotUser'];
  return [...docs].sort(
    (a, b) =>
      order.indexOf(String(a.kind)) - order.indexOf(String(b.kind)) ||
      (String(a.name) < String(b.name) ? -1 : String(a.name) > String(b.name) ? 1 : 0),
  );
}

describe('round trip', () => {
  it('valid manifests printed to YAML load to the schema model, and back', () => {
    fc.assert(
      fc.property(manifestSet, (files) => {
        const texts = toFiles(files);
        const auto = buildFrom(texts);
        if (!auto.ok)
          throw new Error(
            auto.diagnostics
              .map((d) => `${d.file}:${d.line}:${d.column}: ${d.path}: ${d.message}`)
              .join('\n'),
          );
        const expected = sortByKindAndName(
          files.flat().map((doc) => SCHEMAS[doc.kind as keyof typeof SCHEMAS].parse(doc) as Loose),
        );
        expect(strip(auto.set)).toEqual(expected);

        const again = buildFrom({
          'all.yaml': strip(auto.set)
            .map((d) => stringify(d))
            .join('---\n'),
        });
        expect(again.ok && strip(again.set)).toEqual(strip(auto.set));
      }),
      { numRuns: 150 },
    );
  });
});
