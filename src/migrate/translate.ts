/**
 * Edge manifests -> CloudEndpoint manifests with a traffic policy each (the mapping of the cloud
 * endpoints specification, section 4). Pure: the command reads and writes the files.
 *
 * Every field without an equivalent is a located diagnostic: an error where dropping it would let
 * through traffic the edge refused (an allow list that cannot be expressed), a warning where it
 * only loses something harmless. Values written as `{ env }` / `{ file }` stay references: the
 * translation copies them from the document as written (`raw`), never from the resolved value.
 */
import { RE2JS } from 're2js';
import type { Diagnostic } from '../errors.js';
import { type FieldPath, formatPath } from '../manifest/paths.js';
import type { HttpsEdgeManifest, RouteManifest, TlsEdgeManifest } from '../manifest/schema.js';
import { type Action, compressAction, headerActions, type Rule, terminateTls } from './actions.js';
import { anyOf, bySpecificity, emailRefused, routeGuards, userAgentDenied } from './cel.js';
import { authAction, circuitBreaker, routePolicyRules } from './modules.js';
import type { Emit, Source } from './source.js';

export type { Rule } from './actions.js';

export type EdgeInput =
  | { readonly kind: 'TLSEdge'; readonly edge: TlsEdgeManifest; readonly source: Source }
  | { readonly kind: 'HTTPSEdge'; readonly edge: HttpsEdgeManifest; readonly source: Source };

export interface Policy {
  on_tcp_connect?: Rule[];
  on_http_request?: Rule[];
  on_http_response?: Rule[];
}

/** One CloudEndpoint manifest document, in the key order it is written. */
export interface CloudEndpointDoc {
  kind: 'CloudEndpoint';
  name: string;
  url: string;
  description?: unknown;
  metadata?: unknown;
  /** Carried from the edge: deleting the endpoint is refused, as deleting the edge was. */
  protect?: true;
  /** Carried from the edge: the endpoint is left as it is live (not created while suspended). */
  suspend?: true;
  traffic_policy: Policy;
  /** Policy tests of what the edge did (./cases.ts, added by ./migrate.ts). */
  tests?: unknown[];
}

export interface Translation {
  /** The endpoints of one edge, one per hostport, all with the same policy. */
  readonly endpoints: CloudEndpointDoc[];
  readonly diagnostics: Diagnostic[];
}

/** Backend ID -> internal URL, given by the user. */
export type BackendMap = ReadonlyMap<string, string>;

export function translateEdge(input: EdgeInput, backends: BackendMap): Translation {
  const diagnostics: Diagnostic[] = [];
  const emit: Emit = (path, severity, message) =>
    diagnostics.push({ ...input.source.locate(path), path: formatPath(path), severity, message });
  const policy =
    input.kind === 'TLSEdge'
      ? tlsPolicy(input.edge, input.source, backends, emit)
      : httpsPolicy(input.edge, input.source, backends, emit);
  // The name goes into every endpoint's name: a reference there leaves no endpoint to write.
  if (input.source.refused(['name'], "an endpoint's name", emit))
    return { endpoints: [], diagnostics };
  const endpoints = endpointUrls(input, emit).map(({ name, url }) => {
    const doc: CloudEndpointDoc = { kind: 'CloudEndpoint', name, url, traffic_policy: policy };
    const description = input.source.keep(['description'], input.edge.description);
    if (description !== undefined) doc.description = description;
    if (Object.keys(input.edge.metadata).length > 0) {
      doc.metadata = input.source.keep(['metadata'], input.edge.metadata);
    }
    // Written before the policy, where a reader looks for them.
    const { traffic_policy, ...head } = doc;
    return {
      ...head,
      ...(input.edge.protect ? { protect: true as const } : {}),
      ...(input.edge.suspend === true ? { suspend: true as const } : {}),
      traffic_policy,
    };
  });
  if (input.edge.hostports.length === 0) {
    emit([], 'warning', 'the edge has no hostports: no endpoint is written for it');
  }
  return { endpoints, diagnostics };
}

// ---- URLs -------------------------------------------------------------------------------------

const NAME_MAX = 63;

function endpointUrls(input: EdgeInput, emit: Emit): { name: string; url: string }[] {
  const { edge } = input;
  const parsed = edge.hostports.flatMap((hostport, i) => {
    if (input.source.refused(['hostports', i], "an endpoint's URL", emit)) return [];
    const at = hostport.lastIndexOf(':');
    return [{ host: hostport.slice(0, at).toLowerCase(), port: hostport.slice(at + 1), i }];
  });
  const single = parsed.length === 1;
  return parsed.flatMap(({ host, port, i }) => {
    const internal = host.endsWith('.internal');
    if (port !== '443' && !internal) {
      emit(
        ['hostports', i],
        'error',
        `a public endpoint serves ${input.kind === 'TLSEdge' ? 'tls' : 'https'} on port 443 only`,
      );
      return [];
    }
    const url =
      input.kind === 'TLSEdge'
        ? `tls://${host}:${port}`
        : port === '443'
          ? `https://${host}`
          : `https://${host}:${port}`;
    const sameHost = parsed.filter((p) => p.host === host).length > 1;
    const name = single ? edge.name : `${edge.name}-${host}${sameHost ? `-${port}` : ''}`;
    if (name.length > NAME_MAX) {
      emit(
        ['hostports', i],
        'error',
        `the endpoint name "${name}" would be longer than ${NAME_MAX} characters: shorten the edge's name`,
      );
      return [];
    }
    return [{ name, url }];
  });
}

// ---- TLS edges --------------------------------------------------------------------------------

function tlsPolicy(
  edge: TlsEdgeManifest,
  source: Source,
  backends: BackendMap,
  emit: Emit,
): Policy {
  const rules: Rule[] = [];
  const name = (module: string) => `${edge.name} ${module}`;
  const ip = edge.ip_restriction;
  if (ip?.enabled) {
    const ids = source.keep(['ip_restriction', 'ip_policy_ids'], ip.ip_policy_ids);
    rules.push({ name: name('ip_restriction'), actions: [restrictIps(ids)] });
  }
  const tls = terminateTls(edge, source, emit);
  if (tls) rules.push({ name: name('tls_termination'), actions: [tls] });
  const policy = edge.traffic_policy;
  if (policy?.enabled) {
    rules.push(
      ...routePolicyRules(
        policy.value,
        ['traffic_policy'],
        name('traffic_policy'),
        [],
        source,
        emit,
        'tls',
      ),
    );
  }
  rules.push({
    name: name('backend'),
    actions: [backendAction(edge.backend, ['backend'], source, backends, 'tls', emit)],
  });
  return { on_tcp_connect: rules };
}

/** `ids` as written: IP policy IDs read from env or file stay references in the config. */
function restrictIps(ids: unknown): Action {
  return { type: 'restrict-ips', config: { enforce: true, ip_policies: ids } };
}

function backendAction(
  backend: { enabled: boolean; backend_id: string } | undefined,
  path: FieldPath,
  source: Source,
  backends: BackendMap,
  protocol: 'tls' | 'http',
  emit: Emit,
): Action {
  if (!backend?.enabled) {
    emit(path, 'warning', 'no backend: the endpoint answers with a refusal here');
    return protocol === 'tls'
      ? { type: 'deny' }
      : { type: 'custom-response', config: { status_code: 404 } };
  }
  // The mapping is keyed by the ID as written (and a diagnostic may not show a value read from
  // env or file).
  if (source.refused([...path, 'backend_id'], 'a backend mapping', emit)) {
    return { type: 'forward-internal', config: { url: 'unmapped:' } };
  }
  const url = backends.get(backend.backend_id);
  if (url === undefined) {
    emit(
      [...path, 'backend_id'],
      'error',
      `no internal URL for backend ${backend.backend_id}: pass --backend ${backend.backend_id}=URL`,
    );
  } else {
    const scheme = url.slice(0, url.indexOf(':'));
    const fits = protocol === 'tls' ? ['tls', 'tcp'] : ['http', 'https'];
    if (!fits.includes(scheme)) {
      emit(
        [...path, 'backend_id'],
        'error',
        `the internal URL for ${backend.backend_id} must be ${fits.join(' or ')}:// (got ${url})`,
      );
    }
  }
  return { type: 'forward-internal', config: { url: url ?? `unmapped:${backend.backend_id}` } };
}

// ---- HTTPS edges ------------------------------------------------------------------------------

interface RouteInfo {
  readonly route: RouteManifest;
  readonly path: FieldPath;
  readonly guard: string;
  readonly label: string;
}

/**
 * The request phase is written stage by stage (every route's IP restriction, then every route's
 * user-agent rule, ...). The guards are exclusive, so each request still meets its route's rules
 * in the order of the mapping; and one authentication action can serve several routes.
 */
function httpsPolicy(
  edge: HttpsEdgeManifest,
  source: Source,
  backends: BackendMap,
  emit: Emit,
): Policy {
  // A route whose match is a reference is reported and left out: its value would be written
  // into every guard and rule name.
  const written = edge.routes
    .map((route, index) => ({ ...route, index }))
    .filter((route) => {
      const at: FieldPath = ['routes', route.index];
      const matchType = source.refused([...at, 'match_type'], 'a CEL expression', emit);
      const match = source.refused([...at, 'match'], 'a CEL expression', emit);
      return !matchType && !match;
    });
  const ordered = bySpecificity(written);
  const guards = routeGuards(ordered);
  const routes: RouteInfo[] = ordered.map((route, i) => ({
    route,
    path: ['routes', route.index],
    guard: guards[i]!,
    label: `${edge.name} ${route.match}`,
  }));
  const policy: Policy = {};
  const tls = terminateTls(edge, source, emit);
  if (tls) policy.on_tcp_connect = [{ name: `${edge.name} tls_termination`, actions: [tls] }];
  const request = [
    ...stage(
      routes,
      (r) =>
        r.route.ip_restriction?.enabled && [
          restrictIps(
            source.keep(
              [...r.path, 'ip_restriction', 'ip_policy_ids'],
              r.route.ip_restriction.ip_policy_ids,
            ),
          ),
        ],
      'ip_restriction',
    ),
    ...routes.flatMap((r) => userAgentRule(r, source, emit)),
    ...stage(
      routes,
      (r) => r.route.webhook_verification?.enabled && [webhookAction(r, source, emit)],
      'webhook_verification',
    ),
    ...authRules(routes, source, emit),
    ...stage(
      routes,
      (r) =>
        r.route.circuit_breaker?.enabled && [
          circuitBreaker(r.route.circuit_breaker, [...r.path, 'circuit_breaker'], emit),
        ],
      'circuit_breaker',
    ),
    ...routes.flatMap((r) => routeTrafficPolicy(r, source, emit)),
    ...stage(
      routes,
      (r) => headerActions(r.route.request_headers, [...r.path, 'request_headers'], source, emit),
      'request_headers',
    ),
    ...routes.map((r) => ({
      name: `${r.label} backend`,
      expressions: [r.guard],
      actions: [
        backendAction(r.route.backend, [...r.path, 'backend'], source, backends, 'http', emit),
      ],
    })),
    {
      name: `${edge.name} no route`,
      actions: [{ type: 'custom-response', config: { status_code: 404 } }],
    },
  ];
  policy.on_http_request = request;
  const response = [
    ...stage(routes, (r) => r.route.compression?.enabled && [compressAction()], 'compression'),
    ...stage(
      routes,
      (r) => headerActions(r.route.response_headers, [...r.path, 'response_headers'], source, emit),
      'response_headers',
    ),
    ...routes.flatMap((r) => routeTrafficPolicy(r, source, emit, 'response')),
  ];
  if (response.length > 0) policy.on_http_response = response;
  for (const r of routes) routeGaps(r, emit);
  return policy;
}

type Actions = readonly Action[] | false | undefined;

function stage(
  routes: readonly RouteInfo[],
  actions: (r: RouteInfo) => Actions,
  module: string,
): Rule[] {
  return routes.flatMap((r) => {
    const list = actions(r);
    return list && list.length > 0
      ? [{ name: `${r.label} ${module}`, expressions: [r.guard], actions: [...list] }]
      : [];
  });
}

function userAgentRule(r: RouteInfo, source: Source, emit: Emit): Rule[] {
  const filter = r.route.user_agent_filter;
  if (!filter?.enabled) return [];
  const path = [...r.path, 'user_agent_filter'];
  const allow = source.literals([...path, 'allow'], filter.allow ?? [], emit);
  const deny = source.literals([...path, 'deny'], filter.deny ?? [], emit);
  const emptyAllowed = allow.some((p) => RE2JS.compile(p).matcher('').find());
  return [
    {
      name: `${r.label} user_agent_filter`,
      expressions: [r.guard, userAgentDenied(allow, deny, emptyAllowed)],
      actions: [{ type: 'deny', config: { status_code: 403 } }],
    },
  ];
}

/** The environment variable an sns webhook's topic owner is read from. */
const SNS_TOPIC_OWNER = 'SNS_TOPIC_OWNER';

function webhookAction(r: RouteInfo, source: Source, emit: Emit): Action {
  const hook = r.route.webhook_verification!;
  const path = [...r.path, 'webhook_verification'];
  const config: Record<string, unknown> = {
    provider: source.keep([...path, 'provider'], hook.provider),
  };
  if (hook.secret !== undefined) config.secret = source.keep([...path, 'secret'], hook.secret);
  else {
    // Only sns goes without a secret on an edge; the action needs the topic owner instead.
    config.secret = { env: SNS_TOPIC_OWNER };
    emit(
      path,
      'warning',
      `verify-webhook for sns needs the topic owner (an AWS account ID) as its secret: it is read from the environment variable ${SNS_TOPIC_OWNER}`,
    );
  }
  config.enforce = true;
  return { type: 'verify-webhook', config };
}

/**
 * One authentication action per endpoint: routes that authenticate share it (guarded by any of
 * their guards) when their settings are equal; different settings cannot be expressed.
 */
function authRules(routes: readonly RouteInfo[], source: Source, emit: Emit): Rule[] {
  const authed = routes.flatMap((r) => {
    const action = authAction(r.route, r.path, source, emit);
    return action ? [{ r, action }] : [];
  });
  const first = authed[0];
  if (!first) return [];
  const key = JSON.stringify(first.action.action);
  for (const other of authed.slice(1)) {
    if (JSON.stringify(other.action.action) !== key) {
      emit(
        other.action.path,
        'error',
        `an endpoint has one authentication action: this route authenticates differently from route ${first.r.route.match}`,
      );
    }
  }
  const rules: Rule[] = [
    {
      name: `${authed.map((a) => a.r.label).join(', ')} ${first.action.module}`,
      expressions: [anyOf(authed.map((a) => a.r.guard))],
      actions: [first.action.action],
    },
  ];
  for (const { r, action } of authed) {
    const { addresses, domains } = action;
    if (addresses.length + domains.length === 0) continue;
    rules.push({
      name: `${r.label} ${action.module} allow list`,
      expressions: [r.guard, emailRefused(addresses, domains)],
      actions: [{ type: 'deny', config: { status_code: 403 } }],
    });
  }
  return rules;
}

function routeTrafficPolicy(
  r: RouteInfo,
  source: Source,
  emit: Emit,
  phase: 'request' | 'response' = 'request',
): Rule[] {
  const policy = r.route.traffic_policy;
  if (!policy?.enabled) return [];
  return routePolicyRules(
    policy.value,
    [...r.path, 'traffic_policy'],
    `${r.label} traffic_policy`,
    [r.guard],
    source,
    emit,
    phase === 'request' ? 'http_request' : 'http_response',
  );
}

function routeGaps(r: RouteInfo, emit: Emit): void {
  const { route } = r;
  if (route.websocket_tcp_converter?.enabled) {
    emit(
      [...r.path, 'websocket_tcp_converter'],
      'warning',
      'cloud endpoints have no websocket-to-TCP converter: it is dropped',
    );
  }
  if (route.description !== undefined) {
    emit(
      [...r.path, 'description'],
      'warning',
      'a route description has nowhere to go: it is dropped',
    );
  }
  if (Object.keys(route.metadata).length > 0) {
    emit([...r.path, 'metadata'], 'warning', 'route metadata has nowhere to go: it is dropped');
  }
}
