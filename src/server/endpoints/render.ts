/**
 * The read shape of an endpoint: every field of cloud-endpoints.md's Endpoint, with empty ones
 * (an unset description or metadata, an agent endpoint's absent policy) left out rather than
 * sent as "" or null. Booleans and numbers are values, never "empty". Cached by record identity,
 * as the edges' renderer does.
 */
import { DOMAINS_PATH } from '../domain-codes.js';
import type { EndpointRec } from '../model.js';

export class EndpointRenderer {
  readonly #base: string;
  readonly #cache = new WeakMap<EndpointRec, string>();

  constructor(base: string) {
    this.#base = base;
  }

  uri(id: string): string {
    return `${this.#base}/endpoints/${id}`;
  }

  endpoint(rec: EndpointRec): string {
    let json = this.#cache.get(rec);
    if (json === undefined) {
      const out: Record<string, unknown> = {
        id: rec.id,
        uri: this.uri(rec.id),
        type: rec.type,
        url: rec.url,
        traffic_policy: rec.traffic_policy,
        bindings: rec.bindings,
        pooling_enabled: rec.pooling_enabled,
        description: rec.description,
        metadata: rec.metadata,
        created_at: rec.created_at,
        updated_at: rec.updated_at,
        scheme: rec.scheme,
        host: rec.host,
        port: rec.port,
        principal: { id: rec.principal_id, uri: `${this.#base}/users/${rec.principal_id}` },
        // The reserved domain it matched (account-resources.md section 1); absent without one.
        domain:
          rec.domain_id === undefined
            ? null
            : { id: rec.domain_id, uri: `${this.#base}${DOMAINS_PATH}/${rec.domain_id}` },
      };
      for (const [key, value] of Object.entries(out)) {
        if (value === '' || value === null || (Array.isArray(value) && value.length === 0)) {
          delete out[key];
        }
      }
      json = JSON.stringify(out);
      this.#cache.set(rec, json);
    }
    return json;
  }
}
