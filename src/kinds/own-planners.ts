/**
 * The four kinds edgesync managed first, as definitions: TLS and HTTPS edges (routes and modules
 * under them), bot users and cloud endpoints. Their documents are shaped by the loader's own
 * schemas (src/manifest/schema.ts) and each has its own planner in src/plan/ (host and port
 * claims, routes, the auth swap, cut-overs, namesakes without an owner mark); everything else
 * about them (listing, status, metrics, import order, the registry's dependency order) is read
 * from here like any kind's.
 */
import type { EndpointBinding } from '../hosted/cloud-endpoints.js';
import { defaultBinding, parseEndpointUrl } from '../manifest/endpoint-url.js';
import { SERVICE_USER_KINDS } from '../manifest/modules.js';
import { parsePolicyText } from '../manifest/policy-text.js';
import type { KindDefinition, Reference } from './definition.js';
import { coveringDomains, needsReservedDomain } from './reserved-domain.js';

const METADATA = { by: 'metadata' } as const;

export const TLS_EDGE: KindDefinition = {
  kind: 'tls_edge',
  plural: 'tls_edges',
  manifestKinds: ['TLSEdge'],
  description:
    'A TLS edge, keyed by name. protect: true forbids deleting it; id adopts an existing unowned edge.',
  api: {
    list: 'listTlsEdges',
    create: 'createTlsEdge',
    update: 'updateTlsEdge',
    delete: 'deleteTlsEdge',
  },
  absentWithoutAccess: true,
  ownership: METADATA,
  planner: 'edges',
  setKey: 'tlsEdges',
  prune: true,
  order: 50,
};

export const HTTPS_EDGE: KindDefinition = {
  kind: 'https_edge',
  plural: 'https_edges',
  manifestKinds: ['HTTPSEdge'],
  description:
    'An HTTPS edge with its routes, keyed by name. protect: true forbids deleting it; id adopts an existing unowned edge.',
  api: {
    list: 'listHttpsEdges',
    create: 'createHttpsEdge',
    update: 'updateHttpsEdge',
    delete: 'deleteHttpsEdge',
  },
  absentWithoutAccess: true,
  ownership: METADATA,
  planner: 'edges',
  setKey: 'httpsEdges',
  prune: true,
  order: 51,
};

/**
 * Service users: `kind: ServiceUser`, or `kind: BotUser`, the former name the service keeps
 * (the same records under `/service_users` and `/bot_users`). The plan's kind and addresses stay
 * `bot_user`, the name plans, state and status have always shown them under.
 */
export const BOT_USER: KindDefinition = {
  kind: 'bot_user',
  plural: 'bot_users',
  manifestKinds: SERVICE_USER_KINDS,
  description:
    'A service user (BotUser is its former name), matched by name; ensure: absent deletes it (service users are never pruned implicitly).',
  api: {
    list: 'listBotUsers',
    create: 'createBotUser',
    update: 'updateBotUser',
    delete: 'deleteBotUser',
  },
  ownership: { by: 'key', key: (l) => String(l.name), declared: (d) => d.name },
  planner: 'bot_users',
  setKey: 'botUsers',
  prune: false,
  order: 10,
};

export const CLOUD_ENDPOINT: KindDefinition = {
  kind: 'cloud_endpoint',
  plural: 'cloud_endpoints',
  manifestKinds: ['CloudEndpoint'],
  description:
    'A cloud endpoint with its traffic policy, keyed by name. protect: true forbids deleting it; id adopts an existing endpoint no owner claims.',
  api: {
    list: 'listEndpoints',
    create: 'createEndpoint',
    update: 'updateEndpoint',
    delete: 'deleteEndpoint',
  },
  ownership: METADATA,
  // Its host on a reserved domain (created first, deleted last), and the resources its policy
  // names (by `{ ref }`, or a secret by `secrets.get` in its text).
  refersTo: ['reserved_domain', 'ip_policy', 'certificate_authority', 'vault', 'secret'],
  references: (d) => endpointReferences(d),
  // A live record's policy is its text; a declared one's is data (its raw IDs count too).
  liveReferences: (l) =>
    livePolicyIds(
      typeof l.traffic_policy === 'string' ? parsePolicyText(l.traffic_policy) : l.traffic_policy,
    ),
  planner: 'cloud_endpoints',
  setKey: 'cloudEndpoints',
  prune: true,
  order: 60,
};

export const OWN_PLANNER_KINDS: readonly KindDefinition[] = [
  TLS_EDGE,
  HTTPS_EDGE,
  BOT_USER,
  CLOUD_ENDPOINT,
];

/**
 * Where a traffic policy refers to another kind's resource by name, `{ ref: NAME }` in a list
 * of an action's config: the action type, the config field, the kind referred to. The policy
 * sent to the API carries the resource's ID there.
 */
const POLICY_REFERENCE_SITES: readonly {
  readonly action: string;
  readonly field: string;
  readonly kind: string;
}[] = [
  { action: 'restrict-ips', field: 'ip_policies', kind: 'ip_policy' },
  {
    action: 'terminate-tls',
    field: 'mutual_tls_certificate_authorities',
    kind: 'certificate_authority',
  },
];

/**
 * Each list at a reference site of a policy (`ip_policies` of every `restrict-ips`), with its
 * path from the policy and the kind its items refer to.
 */
function eachReferenceSite(
  policy: unknown,
  visit: (list: readonly unknown[], path: (string | number)[], kind: string) => void,
): void {
  if (typeof policy !== 'object' || policy === null) return;
  for (const [phase, rules] of Object.entries(policy)) {
    if (!Array.isArray(rules)) continue;
    rules.forEach((rule: unknown, r) => {
      const actions = (rule as { actions?: unknown } | null)?.actions;
      if (!Array.isArray(actions)) return;
      actions.forEach((action: unknown, a) => {
        const { type, config } = (action ?? {}) as { type?: unknown; config?: unknown };
        for (const site of POLICY_REFERENCE_SITES) {
          if (site.action !== type || typeof config !== 'object' || config === null) continue;
          const list = (config as Record<string, unknown>)[site.field];
          if (!Array.isArray(list)) continue;
          visit(list, [phase, r, 'actions', a, 'config', site.field], site.kind);
        }
      });
    });
  }
}

/** The `{ ref: NAME }` references of a cloud endpoint's traffic policy, with their paths. */
export function policyReferences(policy: unknown): Reference[] {
  const out: Reference[] = [];
  eachReferenceSite(policy, (list, path, kind) => {
    list.forEach((item: unknown, i) => {
      const ref = (item as { ref?: unknown } | null)?.ref;
      if (typeof ref !== 'string' || Object.keys(item as object).length !== 1) return;
      out.push({ kind, name: ref, path: ['traffic_policy', ...path, i] });
    });
  });
  return out;
}

/** The IDs a live policy names at the reference sites (`ipp_...` in `restrict-ips`). */
function livePolicyIds(policy: unknown): { kind: string; id: string }[] {
  const out: { kind: string; id: string }[] = [];
  eachReferenceSite(policy, (list, _path, kind) => {
    for (const item of list) if (typeof item === 'string') out.push({ kind, id: item });
  });
  return out;
}

/**
 * The reserved domain a public http, https or tls endpoint's host needs (the service refuses the
 * endpoint without one: 319, or 318 for a wildcard host): the same name or a wildcard covering
 * it, declared or live (a domain reserved by hand serves it as it is). Nothing in the endpoint
 * takes the domain's ID: the reference orders the plan, and the endpoint is not created while
 * its domain is not ready.
 */
export function domainReferences(d: Readonly<Record<string, unknown>>): Reference[] {
  if (typeof d.url !== 'string') return [];
  const url = parseEndpointUrl(d.url);
  if ('problem' in url) return [];
  const bindings = Array.isArray(d.bindings) ? (d.bindings as EndpointBinding[]) : [];
  if (!needsReservedDomain(url.scheme, bindings[0] ?? defaultBinding(url))) return [];
  return [
    {
      kind: 'reserved_domain',
      name: url.host,
      path: ['url'],
      keys: coveringDomains(url.host),
      liveSatisfies: true,
      orderOnly: true,
      requireReady: true,
      onlyWhereUsed: true,
    },
  ];
}

/**
 * `${secrets.get('vault', 'name')}` in a policy string (CEL interpolation, quoted either way):
 * the service reads the secret by name when a request comes, so nothing is filled in; the
 * references only order the endpoint's write after the creates of its vault and secret.
 */
const SECRETS_GET = /\$\{\s*secrets\.get\(\s*(['"])([^'"]*)\1\s*,\s*(['"])([^'"]*)\3\s*\)\s*\}/g;

/** The `secrets.get` references of a cloud endpoint's traffic policy: its vault and its secret. */
export function policySecretReferences(policy: unknown): Reference[] {
  const out: Reference[] = [];
  const walk = (value: unknown, path: (string | number)[]): void => {
    if (typeof value === 'string') {
      for (const found of value.matchAll(SECRETS_GET)) {
        const [, , vault, , name] = found as unknown as [string, string, string, string, string];
        const at = ['traffic_policy', ...path];
        out.push({
          kind: 'vault',
          name: vault,
          path: at,
          liveSatisfies: true,
          orderOnly: true,
          onlyWhereUsed: true,
        });
        out.push({
          kind: 'secret',
          name,
          path: at,
          liveSatisfies: true,
          orderOnly: true,
          onlyWhereUsed: true,
          within: { kind: 'vault', name: vault },
        });
      }
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, [...path, i]);
      });
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    }
  };
  walk(policy, []);
  return out;
}

/**
 * Every reference of a declared endpoint, worked out once per manifest object: every plan asks
 * for them, and the daemon keeps its manifests between cycles, so an unchanged endpoint costs no
 * second walk of its policy. Read-only to callers.
 */
const referencesOf = new WeakMap<object, readonly Reference[]>();

function endpointReferences(d: Readonly<Record<string, unknown>>): readonly Reference[] {
  let found = referencesOf.get(d);
  if (found === undefined) {
    found = [
      ...domainReferences(d),
      ...policyReferences(d.traffic_policy),
      ...policySecretReferences(d.traffic_policy),
    ];
    referencesOf.set(d, found);
  }
  return found;
}
