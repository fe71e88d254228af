/**
 * The semantics check shared by the property test and its mutation tests: a reference model of an
 * HTTPS edge (which route it chose, which modules it ran, whom it refused) and generators of
 * edges and requests. The generated policy, evaluated with a real CEL engine, must agree with it.
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import type { HttpsEdgeManifest, RouteManifest } from '../../../src/manifest/schema.js';
import { translateEdge } from '../../../src/migrate/translate.js';
import { edgeFromYaml, evaluate, type Outcome, type Request } from './helpers.js';

export const BACKENDS = new Map([
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5z', 'https://web.internal'],
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a', 'http://api.internal:8080'],
]);

const PATHS = ['/', '/a', '/a/b', '/ab', '/b', "/it's", '/back\\slash'];
const PATTERNS = ['bot', '^curl', '^$', 'Mozilla', '.*', 'x{0}'];
const EMAILS = ['a@x.com', 'b@y.com'];
const DOMAINS = ['x.com', 'z.com'];

const optionalList = <T>(items: readonly T[]) =>
  fc.option(fc.subarray([...items], { minLength: 0 }), { nil: undefined });

const routeArb = fc.record(
  {
    match_type: fc.constantFrom('exact_path', 'path_prefix'),
    match: fc.constantFrom(...PATHS),
    backend: fc.option(fc.record({ backend_id: fc.constantFrom(...BACKENDS.keys()) }), {
      nil: undefined,
    }),
    ip_restriction: fc.option(fc.constant({ ip_policy_ids: ['ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY'] }), {
      nil: undefined,
    }),
    user_agent_filter: fc.option(
      fc.record(
        { allow: optionalList(PATTERNS), deny: optionalList(PATTERNS) },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
    oauth: fc.option(
      fc
        .record(
          { email_addresses: optionalList(EMAILS), email_domains: optionalList(DOMAINS) },
          { requiredKeys: [] },
        )
        .map((google) => ({ provider: { google } })),
      { nil: undefined },
    ),
    circuit_breaker: fc.option(fc.constant({ error_threshold_percentage: 0.5 }), {
      nil: undefined,
    }),
    request_headers: fc.option(fc.constant({ add: { 'X-From': 'edge' }, remove: ['X-Drop'] }), {
      nil: undefined,
    }),
  },
  { requiredKeys: ['match_type', 'match'] },
);

/** Clean JSON (no undefined keys) of an HTTPS edge with routes unique by `match`. */
export const edgeArb = fc
  .uniqueArray(routeArb, { minLength: 1, maxLength: 4, selector: (r) => r.match })
  .map(
    (routes) =>
      JSON.parse(
        JSON.stringify({
          kind: 'HTTPSEdge',
          name: 'shop',
          hostports: ['shop.example.com:443'],
          routes,
        }),
      ) as unknown,
  );

export const requestArb: fc.Arbitrary<Request> = fc.record({
  path: fc.constantFrom(...PATHS, '/a/bc', '/c', '/abc', "/it's/x"),
  host: fc.constant('shop.example.com'),
  userAgent: fc.constantFrom(undefined, '', 'bot/1', 'curl/8', 'Mozilla/5.0'),
  email: fc.constantFrom('a@x.com', 'b@y.com', 'c@z.com', 'd@w.com', 'e@notx.com'),
});

// ---- the reference model of an edge ------------------------------------------------------------

/** The edge's choice: an exact route for the path, else the longest matching prefix. */
export function chooseRoute(
  routes: readonly RouteManifest[],
  path: string,
): RouteManifest | undefined {
  const exact = routes.find((r) => r.match_type === 'exact_path' && r.match === path);
  if (exact) return exact;
  return routes
    .filter((r) => r.match_type === 'path_prefix' && path.startsWith(r.match))
    .sort((a, b) => b.match.length - a.match.length)[0];
}

const finds = (pattern: string, text: string) => RE2JS.compile(pattern).matcher(text).find();

function userAgentAllowed(
  filter: { allow?: string[] | undefined; deny?: string[] | undefined },
  ua: string | undefined,
): boolean {
  const allow = filter.allow ?? [];
  const deny = filter.deny ?? [];
  if (ua === undefined) return allow.some((p) => finds(p, ''));
  return allow.some((p) => finds(p, ua)) || !deny.some((p) => finds(p, ua));
}

function emailAllowed(
  settings: { email_addresses?: string[] | undefined; email_domains?: string[] | undefined },
  email: string,
): boolean {
  const addresses = settings.email_addresses ?? [];
  const domains = settings.email_domains ?? [];
  if (addresses.length + domains.length === 0) return true;
  return addresses.includes(email) || domains.some((d) => email.endsWith(`@${d}`));
}

export function edgeOutcome(edge: HttpsEdgeManifest, request: Request): Outcome {
  const route = chooseRoute(edge.routes, request.path);
  if (!route) return { end: 'respond 404', applied: [] };
  const applied: string[] = [];
  if (route.ip_restriction) applied.push('restrict-ips');
  if (route.user_agent_filter && !userAgentAllowed(route.user_agent_filter, request.userAgent)) {
    return { end: 'deny 403', applied };
  }
  if (route.oauth) {
    applied.push('oauth');
    if (!emailAllowed(route.oauth.provider.google ?? {}, request.email))
      return { end: 'deny 403', applied };
  }
  if (route.circuit_breaker) applied.push('circuit-breaker');
  if (route.request_headers) applied.push('remove-headers', 'add-headers');
  if (!route.backend) return { end: 'respond 404', applied };
  return { end: `forward ${BACKENDS.get(route.backend.backend_id)}`, applied };
}

/** The property: for every request, the translated policy does what the edge did. */
export function agrees(edgeJson: unknown, requests: readonly Request[]): boolean {
  const input = edgeFromYaml(JSON.stringify(edgeJson));
  if (input.kind !== 'HTTPSEdge') throw new Error('expected an HTTPS edge');
  const { endpoints } = translateEdge(input, BACKENDS);
  const rules = endpoints[0]!.traffic_policy.on_http_request ?? [];
  return requests.every((request) => {
    const got = evaluate(rules, request);
    const want = edgeOutcome(input.edge, request);
    return got.end === want.end && JSON.stringify(got.applied) === JSON.stringify(want.applied);
  });
}
