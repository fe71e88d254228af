/**
 * The records the store keeps: immutable values, replaced whole on every change (so a rendered
 * response can be cached by object identity), and the mutations that change them, which are
 * also the vocabulary of the persistent log. Module values are the normalized write shapes
 * inferred from schemas.ts.
 */
import type { Binding, EndpointType, Scheme } from './endpoints/codes.js';
import type { HttpsEdgeModules, RouteModules, TlsEdgeModules } from './schemas.js';

interface Common {
  readonly id: string;
  /** RFC 3339, UTC, second precision. */
  readonly created_at: string;
}

interface EdgeCommon extends Common {
  readonly description: string;
  readonly metadata: string;
  readonly hostports: readonly string[];
}

export interface TlsEdgeRec extends EdgeCommon {
  readonly modules: Readonly<TlsEdgeModules>;
}

export interface HttpsEdgeRec extends EdgeCommon {
  readonly modules: Readonly<HttpsEdgeModules>;
  /** Ordered by ID, that is by creation. Not persisted with the edge: routes have own records. */
  readonly routes: readonly RouteRec[];
}

export type MatchType = 'exact_path' | 'path_prefix';

export interface RouteRec extends Common {
  readonly edge_id: string;
  readonly match_type: MatchType;
  readonly match: string;
  readonly description: string;
  readonly metadata: string;
  readonly modules: Readonly<RouteModules>;
}

export interface BotUserRec extends Common {
  readonly name: string;
  readonly active: boolean;
}

/**
 * A cloud endpoint (or an agent endpoint, which the server seeds at start and never persists).
 * `url` is normalised; `scheme`, `host` and `port` (the effective port) are derived from it.
 */
export interface EndpointRec extends Common {
  readonly type: EndpointType;
  readonly url: string;
  readonly scheme: Scheme;
  readonly host: string;
  readonly port: number;
  /** Exactly as last sent. */
  readonly traffic_policy: string;
  readonly bindings: readonly Binding[];
  readonly pooling_enabled: boolean;
  readonly description: string;
  readonly metadata: string;
  readonly updated_at: string;
  /** The ID of the principal (the API key's owner) that created it. */
  readonly principal_id: string;
}

// ---- IP policies and vaults (account-resources.md sections 2 and 3) -------------------------

export interface IpPolicyRec extends Common {
  readonly description: string;
  readonly metadata: string;
}

export type IpRuleAction = 'allow' | 'deny';

export interface IpRuleRec extends Common {
  readonly ip_policy_id: string;
  /** As sent (its address the range's lowest, checked on write). */
  readonly cidr: string;
  readonly action: IpRuleAction;
  readonly description: string;
  readonly metadata: string;
}

export interface VaultRec extends Common {
  readonly updated_at: string;
  readonly name: string;
  readonly description: string;
  readonly metadata: string;
  /** The principal's ID (the API key's owner); the service shows plain strings here. */
  readonly created_by: string;
  readonly last_updated_by: string;
}

export interface SecretRec extends Common {
  readonly updated_at: string;
  readonly vault_id: string;
  readonly name: string;
  readonly description: string;
  readonly metadata: string;
  readonly created_by: string;
  readonly last_updated_by: string;
  /** The value, sealed (./secret-seal.ts): never in clear in memory dumps, the log or a reply. */
  readonly sealed_value: string;
}

type AccountKind = 'ipp' | 'ipr' | 'vault' | 'secret';

// ---- end of IP policies and vaults ---------------------------------------------------------

/** A change to one account's state; `a` is the account ID. */
export type Mutation =
  | { readonly t: 'put'; readonly k: 'tls'; readonly a: string; readonly r: TlsEdgeRec }
  | { readonly t: 'put'; readonly k: 'https'; readonly a: string; readonly r: HttpsEdgeRec }
  | { readonly t: 'put'; readonly k: 'route'; readonly a: string; readonly r: RouteRec }
  | { readonly t: 'put'; readonly k: 'bot'; readonly a: string; readonly r: BotUserRec }
  | { readonly t: 'put'; readonly k: 'endpoint'; readonly a: string; readonly r: EndpointRec }
  | { readonly t: 'put'; readonly k: 'ipp'; readonly a: string; readonly r: IpPolicyRec }
  | { readonly t: 'put'; readonly k: 'ipr'; readonly a: string; readonly r: IpRuleRec }
  | { readonly t: 'put'; readonly k: 'vault'; readonly a: string; readonly r: VaultRec }
  | { readonly t: 'put'; readonly k: 'secret'; readonly a: string; readonly r: SecretRec }
  | { readonly t: 'del'; readonly k: AccountKind; readonly a: string; readonly id: string }
  | {
      readonly t: 'del';
      readonly k: 'tls' | 'https' | 'bot' | 'endpoint';
      readonly a: string;
      readonly id: string;
    }
  | {
      readonly t: 'del';
      readonly k: 'route';
      readonly a: string;
      readonly id: string;
      /** The owning edge. */
      readonly e: string;
    };

/** created_at for a record made at `ms`. */
export function rfc3339Seconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
