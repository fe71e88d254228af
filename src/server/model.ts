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
  /** The reserved domain its host matched when written (public http, https and tls only). */
  readonly domain_id?: string;
}

// ---- account resources: reserved domains and certificate authorities (account-resources.md)

/** A Ref to an uploaded or managed certificate (`cert_`). */
export interface CertificateRef {
  readonly id: string;
}

/** The service's work on a domain's managed certificate, as the API shows it. */
export interface CertificateStatus {
  readonly renews_at: string | null;
  readonly provisioning_job: {
    readonly error_code: 'DNS_ERROR' | 'INTERNAL_ERROR' | null;
    readonly msg: string;
    readonly started_at: string;
    readonly retries_at: string | null;
  } | null;
}

export interface ReservedDomainRec extends Common {
  /** Lower-case; `*.` first for a wildcard. */
  readonly domain: string;
  readonly description: string;
  readonly metadata: string;
  /** Null for a subdomain of the service's own domains. */
  readonly cname_target: string | null;
  /** Wildcards of custom domains only. */
  readonly acme_challenge_cname_target: string | null;
  readonly certificate: CertificateRef | null;
  /** Whether `certificate` was uploaded (`certificate_id`) rather than issued under the policy. */
  readonly certificate_uploaded: boolean;
  readonly certificate_management_policy: {
    readonly authority: 'letsencrypt';
    readonly private_key_type: 'ecdsa' | 'rsa';
  } | null;
  readonly certificate_management_status: CertificateStatus | null;
  readonly resolves_to: readonly { readonly value: string }[];
}

export interface CertificateAuthorityRec extends Common {
  readonly description: string;
  readonly metadata: string;
  /** As returned: ends with a newline. */
  readonly ca_pem: string;
  readonly subject_common_name: string;
  readonly not_before: string;
  readonly not_after: string;
  readonly key_usages: readonly string[];
  readonly extended_key_usages: readonly string[];
}

// ---- IP policies and vaults (account-resources.md sections 2 and 3)

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

// ---- end of account resources

/** A change to one account's state; `a` is the account ID. */
export type Mutation =
  | { readonly t: 'put'; readonly k: 'tls'; readonly a: string; readonly r: TlsEdgeRec }
  | { readonly t: 'put'; readonly k: 'https'; readonly a: string; readonly r: HttpsEdgeRec }
  | { readonly t: 'put'; readonly k: 'route'; readonly a: string; readonly r: RouteRec }
  | { readonly t: 'put'; readonly k: 'bot'; readonly a: string; readonly r: BotUserRec }
  | { readonly t: 'put'; readonly k: 'endpoint'; readonly a: string; readonly r: EndpointRec }
  | { readonly t: 'put'; readonly k: 'domain'; readonly a: string; readonly r: ReservedDomainRec }
  | { readonly t: 'put'; readonly k: 'ca'; readonly a: string; readonly r: CertificateAuthorityRec }
  | { readonly t: 'put'; readonly k: 'ipp'; readonly a: string; readonly r: IpPolicyRec }
  | { readonly t: 'put'; readonly k: 'ipr'; readonly a: string; readonly r: IpRuleRec }
  | { readonly t: 'put'; readonly k: 'vault'; readonly a: string; readonly r: VaultRec }
  | { readonly t: 'put'; readonly k: 'secret'; readonly a: string; readonly r: SecretRec }
  | { readonly t: 'del'; readonly k: AccountKind; readonly a: string; readonly id: string }
  | {
      readonly t: 'del';
      readonly k: 'tls' | 'https' | 'bot' | 'endpoint' | 'domain' | 'ca';
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
