/**
 * The cloud endpoint operations: create, get, list (with a CEL `filter`), partial update and
 * delete, on the shared handler kit, store and journal. Each write runs the endpoint's rules in
 * a fixed order (body shape, URL, binding, policy, the host and port of an edge, URL
 * uniqueness and pooling) and commits one record; agent endpoints are listed and read but never
 * changed.
 */
import type { CelInput } from '@bufbuild/cel';
import { ERROR_CODE } from '../../hosted/edge-api.js';
import { DOMAIN_ERROR_CODE } from '../domain-codes.js';
import { domainFor } from '../domain-names.js';
import { RequestError } from '../errors.js';
import { type Call, type HandlerDeps, json, noContent, type Reply } from '../handler-common.js';
import { encodeBase62 } from '../ids.js';
import type { ServerKnobs } from '../knobs.js';
import { filteredList } from '../list-filter.js';
import { type EndpointRec, rfc3339Seconds } from '../model.js';
import type { AccountState } from '../store.js';
import { parseBody } from '../validate.js';
import {
  type Binding,
  ENDPOINT_ERROR_CODE as CODE,
  ENDPOINT_ID_PREFIX,
  PRINCIPAL_ID_PREFIX,
} from './codes.js';
import { checkTrafficPolicy } from './policy.js';
import { EndpointRenderer } from './render.js';
import { endpointCreateSchema, endpointUpdateSchema } from './schemas.js';
import { checkBinding, defaultBinding, type EndpointUrl, parseEndpointUrl } from './url.js';

/** The principal of an account: its owner, as a stable `usr_` ID derived from the account ID. */
export function principalId(accountId: string): string {
  return PRINCIPAL_ID_PREFIX + encodeBase62(BigInt(`0x${accountId}`));
}

function endpointOf(call: Call): EndpointRec {
  const id = call.ids[0] as string;
  const rec = call.account.endpoints.get(id);
  if (rec === undefined)
    throw new RequestError(404, ERROR_CODE.notFound, `endpoint ${id} not found`);
  return rec;
}

function writable(call: Call): EndpointRec {
  const rec = endpointOf(call);
  if (rec.type !== 'cloud') {
    throw new RequestError(
      400,
      ERROR_CODE.invalidValue,
      `endpoint ${rec.id} is an agent endpoint: only its agent changes it (this API writes cloud endpoints only)`,
    );
  }
  return rec;
}

/** The binding sent (at most one), else the URL's default; checked against the URL (18023). */
export function bindingFor(url: EndpointUrl, sent: readonly Binding[] | undefined): Binding {
  const binding = sent?.[0] ?? defaultBinding(url);
  checkBinding(url, binding);
  return binding;
}

/** A host and port an edge of the account still serves cannot be claimed (381). */
function checkNotHeldByEdge(account: AccountState, url: EndpointUrl): void {
  const hostport = `${url.host}:${url.port}`;
  if (account.hostportOwner([hostport], undefined) !== undefined) {
    throw new RequestError(
      400,
      CODE.heldByEdge,
      `url ${url.url}: host and port already reserved by an edge (hostport ${hostport}); delete or move the edge first`,
    );
  }
}

/** The schemes whose public endpoints need a reserved domain (account-resources.md section 1). */
const DOMAIN_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'tls']);

/**
 * The reserved domain a public http, https or tls endpoint's host matches (exactly, or under a
 * wildcard), as `{ domain_id }` to spread into the record; `{}` when none applies. Without a
 * match, the `requireReservedDomains` knob refuses the endpoint: 319, or 318 for a wildcard
 * host (its own wildcard must be reserved).
 */
function domainLink(
  account: AccountState,
  url: EndpointUrl,
  binding: Binding,
  knobs: ServerKnobs,
): { domain_id?: string } {
  if (binding !== 'public' || !DOMAIN_SCHEMES.has(url.scheme)) return {};
  const domain = domainFor(url.host, account.domains.values());
  if (domain !== undefined) return { domain_id: domain.id };
  if (knobs.requireReservedDomains !== true) return {};
  const wildcard = url.host.startsWith('*.');
  throw new RequestError(
    400,
    wildcard ? DOMAIN_ERROR_CODE.wildcardHostNotReserved : DOMAIN_ERROR_CODE.hostNotReserved,
    wildcard
      ? `url ${url.url}: the wildcard domain ${url.host} is not reserved in this account; reserve it first`
      : `url ${url.url}: the domain ${url.host} is not reserved in this account (exactly or under a wildcard); reserve it first`,
  );
}

/**
 * Two endpoints share a URL and binding only if both pool: 18009 when neither does, 18017 when
 * the holder pools and the newcomer does not, 18016 when the newcomer pools and the holder
 * does not.
 */
function checkUnique(
  account: AccountState,
  candidate: { url: string; binding: Binding; pooling: boolean; selfId?: string },
): void {
  for (const other of account.endpoints.values()) {
    if (other.id === candidate.selfId || other.url !== candidate.url) continue;
    if (other.bindings[0] !== candidate.binding) continue;
    if (other.pooling_enabled && candidate.pooling) continue;
    const [code, why] = other.pooling_enabled
      ? [CODE.poolingNotEnabled, `${other.id} pools on it; enable pooling_enabled to join the pool`]
      : candidate.pooling
        ? [CODE.poolingNotEnabledOnHolder, `${other.id} holds it without pooling`]
        : [CODE.urlInUse, `${other.id} already uses it`];
    throw new RequestError(400, code, `url ${candidate.url} (${candidate.binding}): ${why}`);
  }
}

// Long on purpose: a table of one short handler per endpoint operation, over shared deps.
export function endpointHandlers({ store, render, ids, now, knobs }: HandlerDeps) {
  const view = new EndpointRenderer(render.base);
  const one = (rec: EndpointRec) => view.endpoint(rec);
  return {
    createEndpoint(call: Call): Reply {
      const b = parseBody(endpointCreateSchema, call.body);
      const url = parseEndpointUrl(b.url);
      const binding = bindingFor(url, b.bindings);
      checkTrafficPolicy(b.traffic_policy, {
        scheme: url.scheme,
        internal: binding === 'internal',
        ipPolicyExists: (id) => call.account.ipPolicies.get(id) !== undefined,
      });
      checkNotHeldByEdge(call.account, url);
      const domain = domainLink(call.account, url, binding, knobs);
      const pooling = b.pooling_enabled ?? false;
      checkUnique(call.account, { url: url.url, binding, pooling });
      const at = rfc3339Seconds(now());
      const rec: EndpointRec = {
        id: ids.next(ENDPOINT_ID_PREFIX),
        type: 'cloud',
        ...url,
        traffic_policy: b.traffic_policy,
        bindings: [binding],
        pooling_enabled: pooling,
        description: b.description ?? '',
        metadata: b.metadata ?? '',
        created_at: at,
        updated_at: at,
        principal_id: principalId(call.accountId),
        ...domain,
      };
      const durable = store.commit({ t: 'put', k: 'endpoint', a: call.accountId, r: rec });
      return json(201, one(rec), durable);
    },
    getEndpoint: (call: Call): Reply => json(200, one(endpointOf(call))),
    listEndpoints: (call: Call): Promise<Reply> =>
      filteredList(render, call, {
        collection: call.account.endpoints,
        key: 'endpoints',
        path: '/endpoints',
        one,
        // The record as the client sees it (JSON), so `obj` has exactly the answer's fields.
        cel: (rec) => JSON.parse(one(rec)) as CelInput,
      }),
    updateEndpoint(call: Call): Reply {
      const ep = writable(call);
      const b = parseBody(endpointUpdateSchema, call.body);
      if (Object.keys(b).length === 0) {
        throw new RequestError(
          400,
          CODE.emptyUpdate,
          'the update has no field: send at least one to change',
        );
      }
      const url = b.url === undefined ? ep : parseEndpointUrl(b.url);
      if (url.scheme !== ep.scheme) {
        throw new RequestError(
          400,
          CODE.schemeChange,
          `url: the scheme cannot change in place (${ep.scheme} to ${url.scheme}); delete and create instead`,
        );
      }
      const binding = bindingFor(url, b.bindings ?? ep.bindings);
      if (b.traffic_policy !== undefined)
        checkTrafficPolicy(b.traffic_policy, {
          scheme: url.scheme,
          internal: binding === 'internal',
          ipPolicyExists: (id) => call.account.ipPolicies.get(id) !== undefined,
        });
      if (url.url !== ep.url) checkNotHeldByEdge(call.account, url);
      const domain = domainLink(call.account, url, binding, knobs);
      const pooling = b.pooling_enabled ?? ep.pooling_enabled;
      checkUnique(call.account, { url: url.url, binding, pooling, selfId: ep.id });
      const { domain_id: _, ...rest } = ep;
      const rec: EndpointRec = {
        ...rest,
        ...domain,
        url: url.url,
        host: url.host,
        port: url.port,
        bindings: [binding],
        pooling_enabled: pooling,
        traffic_policy: b.traffic_policy ?? ep.traffic_policy,
        description: b.description ?? ep.description,
        metadata: b.metadata ?? ep.metadata,
        updated_at: rfc3339Seconds(now()),
      };
      const durable = store.commit({ t: 'put', k: 'endpoint', a: call.accountId, r: rec });
      return json(200, one(rec), durable);
    },
    deleteEndpoint(call: Call): Reply {
      const ep = writable(call);
      return noContent(store.commit({ t: 'del', k: 'endpoint', a: call.accountId, id: ep.id }));
    },
  };
}
