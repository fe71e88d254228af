/** Builders of valid API read records (as the service returns them), for client unit tests. */
import type { BotUser, HttpsEdge, HttpsRoute, TlsEdge } from '../../../src/api/schemas.js';

export const ORIGIN = 'http://127.0.0.1:9';
const CREATED = '2025-01-01T00:00:00Z';

export function tlsEdge(id: string, extra: Partial<TlsEdge> = {}): TlsEdge {
  return {
    id,
    created_at: CREATED,
    description: '',
    metadata: '',
    hostports: [`${id}.example.test:443`],
    backend: null,
    ip_restriction: null,
    mutual_tls: null,
    tls_termination: null,
    traffic_policy: null,
    ...extra,
  };
}

export function route(edgeId: string, id: string, extra: Partial<HttpsRoute> = {}): HttpsRoute {
  return {
    id,
    edge_id: edgeId,
    created_at: CREATED,
    match_type: 'path_prefix',
    match: '/',
    description: '',
    metadata: '',
    backend: null,
    ip_restriction: null,
    circuit_breaker: null,
    compression: null,
    request_headers: null,
    response_headers: null,
    webhook_verification: null,
    oauth: null,
    saml: null,
    oidc: null,
    websocket_tcp_converter: null,
    user_agent_filter: null,
    traffic_policy: null,
    ...extra,
  };
}

export function httpsEdge(id: string, extra: Partial<HttpsEdge> = {}): HttpsEdge {
  return {
    id,
    created_at: CREATED,
    description: '',
    metadata: '',
    hostports: [],
    mutual_tls: null,
    tls_termination: null,
    routes: [],
    ...extra,
  };
}

export function botUser(id: string, name = id): BotUser {
  return { id, name, active: true, created_at: CREATED };
}
