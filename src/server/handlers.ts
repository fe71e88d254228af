/**
 * The operations of the Edge API on one account's state: create, get, list, update and delete
 * of TLS edges, HTTPS edges, routes, bot users and cloud endpoints, the module
 * sub-resources, and the account resources (reserved domains, certificate authorities, service
 * users, IP policies and their rules, vaults and their secrets). Each handler
 * validates, checks the combined state (hostports, route matches, one auth module), builds the
 * new immutable record and commits it; it renders the response before awaiting durability so
 * the answer shows exactly the state this request produced.
 *
 * One file per resource (tls-, https-, route-, bot-, domain-, ca-, service-user-, ip-policy-,
 * vault-handlers.ts, endpoints/), what they share in handler-common.ts and (the account
 * resources) account-common.ts and list-filter.ts; this module joins them into the one table the route table points into.
 */
import { botUserHandlers } from './bot-handlers.js';
import { certificateAuthorityHandlers } from './ca-handlers.js';
import { domainHandlers } from './domain-handlers.js';
import { endpointHandlers } from './endpoints/handlers.js';
import type { HandlerDeps } from './handler-common.js';
import { httpsEdgeHandlers } from './https-handlers.js';
import { ipPolicyHandlers } from './ip-policy-handlers.js';
import { routeHandlers } from './route-handlers.js';
import { serviceUserHandlers } from './service-user-handlers.js';
import { tlsEdgeHandlers } from './tls-handlers.js';
import { vaultHandlers } from './vault-handlers.js';

export type { Call, HandlerDeps, Reply } from './handler-common.js';

export function createHandlers(deps: HandlerDeps) {
  return {
    ...tlsEdgeHandlers(deps),
    ...httpsEdgeHandlers(deps),
    ...routeHandlers(deps),
    ...botUserHandlers(deps),
    ...endpointHandlers(deps),
    // Account resources: reserved domains, certificate authorities, service users, IP
    // policies and vaults.
    ...domainHandlers(deps),
    ...certificateAuthorityHandlers(deps),
    ...serviceUserHandlers(deps),
    ...ipPolicyHandlers(deps),
    ...vaultHandlers(deps),
  };
}

export type Handlers = ReturnType<typeof createHandlers>;
