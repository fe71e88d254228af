/**
 * The policy tests a migration writes beside each endpoint: what the edge did, read from the
 * edge's own configuration and the edges' documented behaviour (not from the translated
 * policy, which the cases are there to check). Per route: a request to its `match` is refused
 * from outside its IP policies, refused without the user agent its filter requires, refused
 * unsigned when it verifies webhooks, sent to log in when it authenticates (and refused for an
 * address outside its allow list), and otherwise reaches the route's backend; a path no route
 * matches is answered 404. A TLS edge's connection is closed outside its IP policies and
 * forwarded inside them. A value written as `{ env }` / `{ file }` is never copied into a case
 * (the case is left out). Pure.
 */

import { RE2JS } from 're2js';
import type { z } from 'zod';
import type { PolicyCaseSchema } from '../manifest/policy/tests.js';
import type { RouteManifest } from '../manifest/schema.js';
import type { BackendMap, EdgeInput } from './translate.js';

type CaseInput = z.input<typeof PolicyCaseSchema>;
type Given = NonNullable<CaseInput['given']>;

/** A client address outside every IP policy (a case gives the policies' verdicts). */
const OUTSIDE = '198.51.100.7';

function finds(pattern: string, text: string): boolean {
  try {
    return RE2JS.compile(pattern).matcher(text).find();
  } catch {
    return false;
  }
}

function routeCases(
  route: RouteManifest,
  index: number,
  base: string,
  input: EdgeInput,
  backends: BackendMap,
): CaseInput[] {
  const at = ['routes', index];
  const ref = (...path: (string | number)[]) => input.source.isReference([...at, ...path]);
  if (ref('match') || ref('match_type')) return [];
  const url = `${base}${route.match}`;
  if (!URL.canParse(url)) return [];
  const label = `route ${route.match}`;
  const out: CaseInput[] = [];
  const given: Given = {};
  const ip = route.ip_restriction;
  if (ip?.enabled) {
    out.push({
      name: `${label}: refused outside its IP policies`,
      request: { url, client_ip: OUTSIDE },
      expect: { refused_by: 'restrict-ips', status: 403 },
    });
    if (ref('ip_restriction')) return out;
    given.ip_policies = Object.fromEntries(ip.ip_policy_ids.map((id) => [id, 'allow' as const]));
  }
  const ua = route.user_agent_filter;
  if (ua?.enabled) {
    // Without a user agent the edge let a request through only if an allow pattern finds ''.
    if (!(ua.allow ?? []).some((p) => finds(p, ''))) {
      out.push({
        name: `${label}: refused without a user agent`,
        request: { url },
        given: { ...given },
        expect: { status: 403 },
      });
    }
    return out;
  }
  if (route.webhook_verification?.enabled) {
    out.push({
      name: `${label}: an unsigned webhook is refused`,
      request: { url },
      given: { ...given },
      expect: { refused_by: 'verify-webhook', status: 403 },
    });
    given.webhook_verified = true;
  }
  const login = authOf(route);
  if (login !== undefined) {
    out.push({
      name: `${label}: sent to log in`,
      request: { url },
      given: { ...given },
      expect: { auth: login.auth },
    });
    if (login.email === undefined) return out;
    if (login.restricted) {
      out.push({
        name: `${label}: refused for an address outside its allow list`,
        request: { url },
        given: { ...given, identity: { email: 'someone@not-allowed.invalid' } },
        expect: { status: 403 },
      });
    }
    given.identity = { email: login.email };
  }
  // The route's own policy may answer anything: nothing more is known of what the edge did.
  if (route.traffic_policy?.enabled) return out;
  const backend = route.backend;
  const target = backend?.enabled && !ref('backend') ? backends.get(backend.backend_id) : undefined;
  if (backend?.enabled && target === undefined) return out;
  out.push({
    name:
      target === undefined ? `${label}: no backend, answered 404` : `${label}: reaches its backend`,
    request: { url },
    ...(Object.keys(given).length === 0 ? {} : { given }),
    expect: target === undefined ? { status: 404 } : { forward: target },
  });
  return out;
}

/** How the route authenticates, and an address its allow lists let in. */
function authOf(
  route: RouteManifest,
): { auth: string; email: string | undefined; restricted: boolean } | undefined {
  if (route.oauth?.enabled) {
    const [name, settings] = Object.entries(route.oauth.provider).find(([, v]) => v) ?? [];
    if (name === undefined) return undefined;
    const s = (settings ?? {}) as { email_addresses?: string[]; email_domains?: string[] };
    const addresses = s.email_addresses ?? [];
    const domains = s.email_domains ?? [];
    const email =
      addresses[0] ?? (domains[0] === undefined ? 'someone@example.com' : `someone@${domains[0]}`);
    return { auth: name, email, restricted: addresses.length + domains.length > 0 };
  }
  if (route.oidc?.enabled) return { auth: 'openid-connect', email: undefined, restricted: false };
  if (route.saml?.enabled) return { auth: 'saml', email: undefined, restricted: false };
  return undefined;
}

/** The cases of one edge, for its endpoint at `endpointUrl`. */
export function edgeCases(
  input: EdgeInput,
  endpointUrl: string,
  backends: BackendMap,
): CaseInput[] {
  if (input.kind === 'TLSEdge') {
    const { edge } = input;
    const host = endpointUrl.replace(/^tls:\/\//, '').replace(/:\d+$/, '');
    const url = `https://${host}/`;
    const out: CaseInput[] = [];
    const given: Given = {};
    if (edge.ip_restriction?.enabled) {
      out.push({
        name: 'a connection from outside its IP policies is closed',
        request: { url, client_ip: OUTSIDE },
        expect: { refused_by: 'restrict-ips', closed: true },
      });
      if (input.source.isReference(['ip_restriction'])) return out;
      given.ip_policies = Object.fromEntries(
        edge.ip_restriction.ip_policy_ids.map((id) => [id, 'allow' as const]),
      );
    }
    const backend = edge.backend;
    const target =
      backend?.enabled && !input.source.isReference(['backend'])
        ? backends.get(backend.backend_id)
        : undefined;
    if (target !== undefined && !edge.traffic_policy?.enabled) {
      out.push({
        name: 'a connection reaches its backend',
        request: { url },
        ...(Object.keys(given).length === 0 ? {} : { given }),
        expect: { forward: target },
      });
    }
    return out;
  }
  const base = endpointUrl.replace(/\/$/, '');
  const out = input.edge.routes.flatMap((route, i) => routeCases(route, i, base, input, backends));
  const probe = '/edgesync-no-route';
  const routed = input.edge.routes.some((r) =>
    r.match_type === 'exact_path' ? r.match === probe : probe.startsWith(r.match),
  );
  if (!routed) {
    out.push({
      name: 'a path no route matches is answered 404',
      request: { url: `${base}${probe}` },
      expect: { status: 404 },
    });
  }
  return out;
}
