/**
 * Read shapes: turns stored records into the exact JSON of api-notes (every field present, unset
 * modules null, Refs with absolute URIs, server-made SAML URLs, `policy: null` on TLS edges and
 * routes). Records are immutable, so each record's JSON is computed once and cached by object
 * identity; an HTTPS edge's JSON is its own fields plus its routes' cached JSON.
 */
import { BACKEND_KINDS, OAUTH_PROVIDERS } from '../hosted/edge-api.js';
import { HTTPS_EDGE_MODULES, ROUTE_MODULES, TLS_EDGE_MODULES } from '../hosted/modules/index.js';
import type { BotUserRec, HttpsEdgeRec, RouteRec, TlsEdgeRec } from './model.js';
import type { HttpsEdgeModules, RouteModules, TlsEdgeModules } from './schemas.js';

type AnyModules = Partial<TlsEdgeModules & HttpsEdgeModules & RouteModules>;
type ModuleName = keyof AnyModules;

export class Renderer {
  readonly base: string;
  readonly #cache = new WeakMap<object, string>();

  constructor(baseUrl: string) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  tlsEdgeUri(id: string): string {
    return `${this.base}/edges/tls/${id}`;
  }
  httpsEdgeUri(id: string): string {
    return `${this.base}/edges/https/${id}`;
  }
  routeUri(edgeId: string, id: string): string {
    return `${this.base}/edges/https/${edgeId}/routes/${id}`;
  }
  botUserUri(id: string): string {
    return `${this.base}/bot_users/${id}`;
  }

  tlsEdge(rec: TlsEdgeRec): string {
    let json = this.#cache.get(rec);
    if (json === undefined) {
      const out: Record<string, unknown> = {
        id: rec.id,
        description: rec.description,
        metadata: rec.metadata,
        created_at: rec.created_at,
        uri: this.tlsEdgeUri(rec.id),
        hostports: rec.hostports,
      };
      for (const name of TLS_EDGE_MODULES) out[name] = this.moduleValue(name, rec.modules, rec.id);
      out.policy = null;
      json = JSON.stringify(out);
      this.#cache.set(rec, json);
    }
    return json;
  }

  httpsEdge(rec: HttpsEdgeRec): string {
    let json = this.#cache.get(rec);
    if (json === undefined) {
      const out: Record<string, unknown> = {
        id: rec.id,
        description: rec.description,
        metadata: rec.metadata,
        created_at: rec.created_at,
        uri: this.httpsEdgeUri(rec.id),
        hostports: rec.hostports,
      };
      for (const name of HTTPS_EDGE_MODULES)
        out[name] = this.moduleValue(name, rec.modules, rec.id);
      const head = JSON.stringify(out);
      json = `${head.slice(0, -1)},"routes":[${rec.routes.map((r) => this.route(r)).join(',')}]}`;
      this.#cache.set(rec, json);
    }
    return json;
  }

  route(rec: RouteRec): string {
    let json = this.#cache.get(rec);
    if (json === undefined) {
      const out: Record<string, unknown> = {
        edge_id: rec.edge_id,
        id: rec.id,
        created_at: rec.created_at,
        match_type: rec.match_type,
        match: rec.match,
        uri: this.routeUri(rec.edge_id, rec.id),
        description: rec.description,
        metadata: rec.metadata,
      };
      for (const name of ROUTE_MODULES) out[name] = this.moduleValue(name, rec.modules, rec.id);
      out.policy = null;
      json = JSON.stringify(out);
      this.#cache.set(rec, json);
    }
    return json;
  }

  botUser(rec: BotUserRec): string {
    let json = this.#cache.get(rec);
    if (json === undefined) {
      json = JSON.stringify({
        id: rec.id,
        uri: this.botUserUri(rec.id),
        name: rec.name,
        active: rec.active,
        created_at: rec.created_at,
      });
      this.#cache.set(rec, json);
    }
    return json;
  }

  /** JSON of one module's read shape (`null` when unset). */
  module(name: ModuleName, modules: AnyModules, ownerId: string): string {
    return JSON.stringify(this.moduleValue(name, modules, ownerId));
  }

  /** The read shape of a module: IDs become Refs, SAML gains its server-made URLs. */
  moduleValue(name: ModuleName, modules: AnyModules, ownerId: string): unknown {
    switch (name) {
      case 'backend': {
        const m = modules.backend;
        return m == null ? null : { enabled: m.enabled, backend: this.backendRef(m.backend_id) };
      }
      case 'ip_restriction': {
        const m = modules.ip_restriction;
        return m == null
          ? null
          : {
              enabled: m.enabled,
              ip_policies: m.ip_policy_ids.map((id) => this.ref(`ip_policies/${id}`, id)),
            };
      }
      case 'mutual_tls': {
        const m = modules.mutual_tls;
        return m == null
          ? null
          : {
              enabled: m.enabled,
              certificate_authorities: m.certificate_authority_ids.map((id) =>
                this.ref(`certificate_authorities/${id}`, id),
              ),
            };
      }
      case 'oauth': {
        const m = modules.oauth;
        if (m == null) return null;
        const provider: Record<string, unknown> = {};
        for (const p of OAUTH_PROVIDERS) provider[p] = m.provider[p] ?? null;
        return { ...m, provider };
      }
      case 'saml': {
        const m = modules.saml;
        if (m == null) return null;
        const root = `${this.base}/saml/${ownerId}`;
        return {
          enabled: m.enabled,
          options_passthrough: m.options_passthrough,
          cookie_prefix: m.cookie_prefix,
          inactivity_timeout: m.inactivity_timeout,
          maximum_duration: m.maximum_duration,
          idp_metadata: m.idp_metadata,
          force_authn: m.force_authn,
          allow_idp_initiated: m.allow_idp_initiated,
          authorized_groups: m.authorized_groups,
          entity_id: `${root}/metadata`,
          assertion_consumer_service_url: `${root}/acs`,
          single_logout_url: `${root}/slo`,
          request_signing_certificate_pem: m.request_signing_certificate_pem,
          metadata_url: `${root}/metadata`,
          nameid_format: m.nameid_format,
        };
      }
      default:
        // Every other module's stored (normalized) form is its read shape.
        return modules[name] ?? null;
    }
  }

  backendRef(id: string): { id: string; uri: string } {
    const kind = BACKEND_KINDS[id.slice(0, id.indexOf('_') + 1)];
    return this.ref(kind === undefined ? `backends/${id}` : `backends/${kind}/${id}`, id);
  }

  ref(path: string, id: string): { id: string; uri: string } {
    return { id, uri: `${this.base}/${path}` };
  }
}
