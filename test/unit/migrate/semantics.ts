/**
 * The semantics check shared by the property test and its mutation tests: a reference model of an
 * HTTPS edge (which route it chose, which modules it ran, whom it refused) and generators of
 * edges and requests. The generated policy, evaluated with a real CEL engine, must agree with it.
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import type { HttpsEdgeManifest, RouteManifest } from '../../../src/manifest/schema.js';
import { translateEdge } from '../../../src/migrate/translate.js';
import { edgeFromYaml, evaluate, IP_POLICY, type Outcome, type Request } from './helpers.js';

export const BACKENDS = new Map([
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5z', 'https://web.internal'],
  ['bkdtg_2kt3xG55hdajmiOILUFbeDE0v5a', 'http://api.internal:8080'],
]);

const PATHS = ['/', '/a', '/a/b', '/ab', '/b', "/it's", '/back\\slash'];
const PATTERNS = ['bot', '^curl', '^$', 'Mozilla', '.*', 'x{0}'];
const EMAILS = ['a@x.com', 'b@y.com'];
const DOMAINS = ['x.com', 'z.com'];

const HOSTPORTS = ['shop.example.com:443', 'www.example.com:443', 'shop.internal:443'];

/**
 * A route's own traffic policy: one rule whose expression the model can read (`holds`), ending
 * the request (`custom-response`) or not (`add-headers`).
 */
const ROUTE_POLICIES = [
  { expression: "req.url.path.endsWith('x')", holds: (r: Request) => r.path.endsWith('x') },
  { expression: "hasReqHeader('user-agent')", holds: (r: Request) => r.userAgent !== undefined },
] as const;
const ROUTE_ACTIONS = [
  { type: 'custom-response', config: { status_code: 418 } },
  { type: 'add-headers', config: { headers: { 'x-policy': 'route' } } },
] as const;

const optionalList = <T>(items: readonly T[]) =>
  fc.option(fc.subarray([...items], { minLength: 0 }), { nil: undefined });

const routeArb = fc.record(
  {
    match_type: fc.constantFrom('exact_path', 'path_prefix'),
    match: fc.constantFrom(...PATHS),
    backend: fc.option(fc.record({ backend_id: fc.constantFrom(...BACKENDS.keys()) }), {
      nil: undefined,
    }),
    ip_restriction: fc.option(fc.constant({ ip_policy_ids: [IP_POLICY] }), {
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
    webhook_verification: fc.option(
      fc.constant({ provider: 'github', secret: 'whsec-0123456789' }),
      { nil: undefined },
    ),
    traffic_policy: fc.option(
      fc
        .record({
          policy: fc.integer({ min: 0, max: ROUTE_POLICIES.length - 1 }),
          action: fc.integer({ min: 0, max: ROUTE_ACTIONS.length - 1 }),
        })
        .map(({ policy, action }) => ({
          value: {
            on_http_request: [
              {
                name: `p${policy}a${action}`,
                expressions: [ROUTE_POLICIES[policy]!.expression],
                actions: [ROUTE_ACTIONS[action]!],
              },
            ],
          },
        })),
      { nil: undefined },
    ),
  },
  { requiredKeys: ['match_type', 'match'] },
);

interface EdgeJson {
  readonly routes: readonly { readonly match: string }[];
}

/** Clean JSON (no undefined keys) of an HTTPS edge with routes unique by `match`. */
export const edgeArb: fc.Arbitrary<EdgeJson> = fc
  .record({
    routes: fc.uniqueArray(routeArb, { minLength: 1, maxLength: 4, selector: (r) => r.match }),
    hostports: fc.subarray(HOSTPORTS, { minLength: 1 }),
  })
  .map(
    ({ routes, hostports }) =>
      JSON.parse(
        JSON.stringify({ kind: 'HTTPSEdge', name: 'shop', hostports, routes }),
      ) as EdgeJson,
  );

/** What a request's path may go on with after a route's match. */
const suffixArb = fc.string({ unit: fc.constantFrom('a', 'b', 'x', '/', "'", '\\'), maxLength: 4 });

/** Requests for `edge`: paths from its routes' matches (or others) with random suffixes. */
export const requestArb = (edge: EdgeJson): fc.Arbitrary<Request> =>
  fc.record({
    path: fc
      .tuple(fc.constantFrom(...edge.routes.map((r) => r.match), ...PATHS, '/c'), suffixArb)
      .map(([prefix, suffix]) => prefix + suffix),
    host: fc.constant('shop.example.com'),
    userAgent: fc.constantFrom(undefined, '', 'bot/1', 'curl/8', 'Mozilla/5.0'),
    email: fc.constantFrom('a@x.com', 'b@y.com', 'c@z.com', 'd@w.com', 'e@notx.com'),
  });

/** An edge and requests for it. */
export const caseArb = edgeArb.chain((edge) =>
  fc.tuple(fc.constant(edge), fc.array(requestArb(edge), { minLength: 1, maxLength: 12 })),
);

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
  if (route.webhook_verification) applied.push('verify-webhook');
  if (route.oauth) {
    applied.push('oauth');
    if (!emailAllowed(route.oauth.provider.google ?? {}, request.email))
      return { end: 'deny 403', applied };
  }
  if (route.circuit_breaker) applied.push('circuit-breaker');
  const own = routePolicyEnd(route, request, applied);
  if (own !== undefined) return { end: own, applied };
  if (route.request_headers) applied.push('remove-headers', 'add-headers');
  if (!route.backend) return { end: 'respond 404', applied };
  return { end: `forward ${BACKENDS.get(route.backend.backend_id)}`, applied };
}

/** The route's own traffic-policy rule, read back from what the generator wrote. */
function routePolicyEnd(
  route: RouteManifest,
  request: Request,
  applied: string[],
): string | undefined {
  if (!route.traffic_policy) return undefined;
  const name = /^p(\d)a(\d)$/.exec(
    (JSON.parse(route.traffic_policy.value) as { on_http_request: { name: string }[] })
      .on_http_request[0]!.name,
  )!;
  if (!ROUTE_POLICIES[Number(name[1])]!.holds(request)) return undefined;
  const action = ROUTE_ACTIONS[Number(name[2])]!;
  if (action.type === 'custom-response') return 'respond 418';
  applied.push(action.type);
  return undefined;
}

/**
 * The property: one endpoint per hostport, and on each, for every request, the translated
 * policy does what the edge did.
 */
export function agrees(edgeJson: unknown, requests: readonly Request[]): boolean {
  const input = edgeFromYaml(JSON.stringify(edgeJson));
  if (input.kind !== 'HTTPSEdge') throw new Error('expected an HTTPS edge');
  const { endpoints } = translateEdge(input, BACKENDS);
  if (endpoints.length !== input.edge.hostports.length) return false;
  return endpoints.every((endpoint) => {
    const rules = endpoint.traffic_policy.on_http_request ?? [];
    const host = new URL(endpoint.url).hostname;
    return requests.every((r) => {
      const request = { ...r, host };
      const got = evaluate(rules, request);
      const want = edgeOutcome(input.edge, request);
      return got.end === want.end && JSON.stringify(got.applied) === JSON.stringify(want.applied);
    });
  });
}
