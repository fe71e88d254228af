/**
 * Every Edge API module, defined once (a file per module), and which owner carries which under
 * which name. Everything else that knows a module's fields derives from these definitions: the
 * manifest schemas (src/manifest/modules.ts), the client's write and read schemas (src/api/),
 * the defaults table (../defaults.ts), the JSON Schema and the manifest reference, the planner's
 * normalisation (src/plan/normalize.ts) and `import` (src/apply/import.ts). The local server
 * (src/server/) keeps its own schemas on purpose: a test holds it to these definitions.
 */
import type { HttpsEdgeModule, RouteModule, TlsEdgeModule } from '../edge-api.js';
import { backend } from './backend.js';
import { circuitBreaker } from './circuit-breaker.js';
import { compression } from './compression.js';
import type { Field, ModuleDefinition } from './field.js';
import { headers } from './headers.js';
import { ipRestriction } from './ip-restriction.js';
import { mutualTls } from './mutual-tls.js';
import { oauth } from './oauth.js';
import { oidc } from './oidc.js';
import { saml } from './saml.js';
import { tlsTermination, tlsTerminationAtEdge } from './tls-termination.js';
import { trafficPolicy } from './traffic-policy.js';
import { userAgentFilter } from './user-agent-filter.js';
import { webhookVerification } from './webhook-verification.js';
import { websocketTcpConverter } from './websocket-tcp-converter.js';

export type { DefaultValue, Field, ModuleDefinition } from './field.js';
export {
  backend,
  circuitBreaker,
  compression,
  headers,
  ipRestriction,
  mutualTls,
  oauth,
  oidc,
  saml,
  tlsTermination,
  tlsTerminationAtEdge,
  trafficPolicy,
  userAgentFilter,
  webhookVerification,
  websocketTcpConverter,
};

/** The modules of each owner, by sub-resource name (the lists of ../edge-api.ts, none forgotten). */
export const MODULES = {
  tls_edge: {
    backend,
    ip_restriction: ipRestriction,
    mutual_tls: mutualTls,
    tls_termination: tlsTermination,
    traffic_policy: trafficPolicy,
  },
  https_edge: { mutual_tls: mutualTls, tls_termination: tlsTerminationAtEdge },
  route: {
    backend,
    ip_restriction: ipRestriction,
    circuit_breaker: circuitBreaker,
    compression,
    request_headers: headers,
    response_headers: headers,
    webhook_verification: webhookVerification,
    oauth,
    saml,
    oidc,
    websocket_tcp_converter: websocketTcpConverter,
    user_agent_filter: userAgentFilter,
    traffic_policy: trafficPolicy,
  },
} as const satisfies {
  readonly tls_edge: Record<TlsEdgeModule, ModuleDefinition>;
  readonly https_edge: Record<HttpsEdgeModule, ModuleDefinition>;
  readonly route: Record<RouteModule, ModuleDefinition>;
};

/**
 * Each module name with its definition, once (the fullest where owners differ: a TLS edge's TLS
 * termination). In the order of the defaults table.
 */
export const MODULES_BY_NAME: ReadonlyMap<string, ModuleDefinition> = new Map<
  string,
  ModuleDefinition
>([
  ['backend', backend],
  ['ip_restriction', ipRestriction],
  ['mutual_tls', mutualTls],
  ['tls_termination', tlsTermination],
  ['circuit_breaker', circuitBreaker],
  ['compression', compression],
  ['request_headers', headers],
  ['response_headers', headers],
  ['webhook_verification', webhookVerification],
  ['oauth', oauth],
  ['oidc', oidc],
  ['saml', saml],
  ['websocket_tcp_converter', websocketTcpConverter],
  ['user_agent_filter', userAgentFilter],
  ['traffic_policy', trafficPolicy],
]);

/** The fields of `module` (by name) that satisfy `test`, in definition order. */
export function fieldsWhere(
  module: string,
  test: (field: Field) => boolean,
): [name: string, field: Field][] {
  const def = MODULES_BY_NAME.get(module);
  if (def === undefined) return [];
  return Object.entries(def.fields).filter(([, f]) => test(f));
}
