/**
 * Agent endpoints: what agents hold online, which the API lists and reads but never writes. The
 * server seeds them at start (`--agent-endpoint URL`) into every account, in memory only: they
 * are not journaled and not in snapshots, so each start has exactly the ones it was told, and
 * tests can prove a controller never touched them.
 */
import { ConfigError } from '../../errors.js';
import type { IdGenerator } from '../ids.js';
import { type EndpointRec, type IpPolicyRec, rfc3339Seconds } from '../model.js';
import type { Store } from '../store.js';
import { accountIdForKey } from '../wire.js';
import { ENDPOINT_ID_PREFIX } from './codes.js';
import { bindingFor, principalId } from './handlers.js';
import { parseEndpointUrl } from './url.js';

export interface AgentEndpointSeed {
  readonly url: string;
  readonly description?: string;
  readonly metadata?: string;
  readonly trafficPolicy?: string;
  readonly poolingEnabled?: boolean;
}

/** Adds the agent endpoints to every account of `apiKeys`; a bad URL refuses the start. */
export function seedAgentEndpoints(
  store: Store,
  apiKeys: readonly string[],
  seeds: readonly AgentEndpointSeed[],
  deps: { ids: IdGenerator; now: () => number },
): void {
  const at = rfc3339Seconds(deps.now());
  for (const seed of seeds) {
    let url: ReturnType<typeof parseEndpointUrl>;
    let binding: ReturnType<typeof bindingFor>;
    try {
      url = parseEndpointUrl(seed.url);
      binding = bindingFor(url, undefined);
    } catch (err) {
      throw new ConfigError(
        `agent endpoint ${JSON.stringify(seed.url)}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    for (const key of apiKeys) {
      const a = accountIdForKey(key);
      const rec: EndpointRec = {
        id: deps.ids.next(ENDPOINT_ID_PREFIX),
        type: 'agent',
        ...url,
        traffic_policy: seed.trafficPolicy ?? '',
        bindings: [binding],
        pooling_enabled: seed.poolingEnabled ?? false,
        description: seed.description ?? '',
        metadata: seed.metadata ?? '',
        created_at: at,
        updated_at: at,
        principal_id: principalId(a),
      };
      // apply, not commit: never journaled.
      store.apply({ t: 'put', k: 'endpoint', a, r: rec });
    }
  }
}

/**
 * IP policies with the given IDs (no rules), seeded like agent endpoints into every account at
 * each start, in memory only: tests whose policies name fixed `ipp_` IDs (tables of the
 * specification, shipped examples) run against an account that has them, as an account on the
 * service would.
 */
export function seedIpPolicies(
  store: Store,
  apiKeys: readonly string[],
  ids: readonly string[],
  now: () => number,
): void {
  const at = rfc3339Seconds(now());
  for (const id of ids) {
    if (!/^ipp_[A-Za-z0-9]+$/.test(id)) {
      throw new ConfigError(`seeded IP policy ${JSON.stringify(id)}: not an ipp_ ID`);
    }
    for (const key of apiKeys) {
      const r: IpPolicyRec = { id, created_at: at, description: 'seeded', metadata: '' };
      // apply, not commit: never journaled.
      store.apply({ t: 'put', k: 'ipp', a: accountIdForKey(key), r });
    }
  }
}
