/**
 * The API client's types: its options, its typed surface (`ApiClient`) and the shapes its calls
 * share. They live apart from client.ts so the rooms the client is built from (transport,
 * exchange, endpoints, pagination) depend on these declarations and never on the client that
 * assembles them: the api folder's imports point one way.
 */
import type { Logger } from '../log.js';
import type { Sleep } from '../retry.js';
import type {
  CertificateAuthority,
  CertificateAuthorityCreate,
  CertificateAuthorityUpdate,
  IpPolicy,
  IpPolicyRule,
  IpPolicyRuleCreate,
  IpPolicyRuleUpdate,
  IpPolicyWrite,
  ReservedDomain,
  ReservedDomainCreate,
  ReservedDomainUpdate,
  Secret,
  SecretCreate,
  SecretUpdate,
  ServiceUser,
  ServiceUserCreate,
  ServiceUserUpdate,
  Vault,
  VaultCreate,
  VaultUpdate,
} from './account-schemas.js';
import type { HttpExchange, HttpMethod } from './exchange.js';
import type { Priority, RateLimiter, RateLimitOptions } from './rate-limit.js';
import type { RetryOptions } from './retry.js';
import type {
  BotUser,
  BotUserCreate,
  BotUserUpdate,
  CloudEndpoint,
  EndpointCreate,
  EndpointUpdate,
  HttpsEdge,
  HttpsEdgeWrite,
  HttpsRoute,
  ModuleName,
  ModuleOwner,
  ModuleOwnerKind,
  ModuleRead,
  ModuleWrite,
  RouteCreate,
  RouteUpdate,
  TlsEdge,
  TlsEdgeWrite,
} from './schemas.js';

/** One HTTP exchange, as the daemon's metrics see it. */
export interface ResponseInfo {
  readonly method: HttpMethod;
  /** The path template, e.g. `/edges/https/{edge_id}/routes/{id}`: bounded label cardinality. */
  readonly route: string;
  /** HTTP status, or 0 when no answer arrived (network error, timeout). */
  readonly status: number;
  readonly durationMs: number;
  /** 1 for the first try, 2 for the first retry... */
  readonly attempt: number;
}

export interface ApiClientOptions {
  /** Absolute base URL without trailing slash (see `resolveApiConfig`). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /**
   * The HTTP exchange (./exchange.ts); an injected one is not closed by the client. Default:
   * undici with a keep-alive pool and the environment's proxy settings, owned (and closed) by
   * the client.
   */
  readonly http?: HttpExchange | undefined;
  /** Per HTTP exchange (headers and body), not per call with its retries. Default 30 s. */
  readonly timeoutMs?: number | undefined;
  /** Fields given override `DEFAULT_RETRY`; `false` sends every request once. */
  readonly retry?: Partial<RetryOptions> | false | undefined;
  /** Client-side budget: at most `limit` requests per rolling window (./rate-limit.ts). */
  readonly rateLimit?: RateLimitOptions | undefined;
  /** A limiter to share with other clients of the same account (wins over `rateLimit`). */
  readonly rateLimiter?: RateLimiter | undefined;
  /** The priority of this client's requests in the limiter, asked at each request. */
  readonly priority?: (() => Priority) | undefined;
  /** Called for every 429 answer (metrics). */
  readonly onThrottled?: (() => void) | undefined;
  readonly sleep?: Sleep | undefined;
  /** Wall clock in ms (also dates `Retry-After`). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** In [0, 1). Default `Math.random`. */
  readonly random?: (() => number) | undefined;
  readonly logger?: Logger | undefined;
  readonly onResponse?: ((info: ResponseInfo) => void) | undefined;
  readonly userAgent?: string | undefined;
  /**
   * Masks the known secret values in a text (`ValueMask.apply`): every message the server sends
   * back (an error's `msg`, a non-JSON body) passes through it before it becomes an error, since
   * a server may echo the request body, secrets included.
   */
  readonly mask?: ((text: string) => string) | undefined;
}

export interface RequestOptions {
  readonly signal?: AbortSignal | undefined;
  /**
   * The write fence: called at the moment each attempt of this request is to leave (after the
   * limiter's wait and any retry's backoff, with no wait between the call and the send). When it
   * throws, that attempt is not sent, nor any after it, and the call rejects with
   * `FencedWriteError` (its `cause` what the fence threw).
   */
  readonly fence?: (() => void) | undefined;
}

export interface ListOptions extends RequestOptions {
  /** Items per page, 1..100; default 100 (the maximum: fewest calls). */
  readonly pageSize?: number | undefined;
}

export interface ListResult<T> {
  readonly items: T[];
  /** HTTP list calls it took (retries of one page not counted). */
  readonly calls: number;
}

type OwnerOf<K extends ModuleOwnerKind> = Extract<ModuleOwner, { readonly kind: K }>;
/** Any module name of any owner, for callers holding module names as data (a serialized plan). */
export type AnyModuleName = ModuleName<'tls_edge'> | ModuleName<'https_edge'> | ModuleName<'route'>;

export interface ApiClient {
  readonly baseUrl: string;

  listTlsEdges(options?: ListOptions): Promise<ListResult<TlsEdge>>;
  listHttpsEdges(options?: ListOptions): Promise<ListResult<HttpsEdge>>;
  listBotUsers(options?: ListOptions): Promise<ListResult<BotUser>>;
  /** Cloud and agent endpoints alike (the caller tells them apart by `type`). */
  listEndpoints(options?: ListOptions): Promise<ListResult<CloudEndpoint>>;

  getTlsEdge(id: string, options?: RequestOptions): Promise<TlsEdge>;
  createTlsEdge(body: TlsEdgeWrite, options?: RequestOptions): Promise<TlsEdge>;
  updateTlsEdge(id: string, body: TlsEdgeWrite, options?: RequestOptions): Promise<TlsEdge>;
  deleteTlsEdge(id: string, options?: RequestOptions): Promise<void>;

  getHttpsEdge(id: string, options?: RequestOptions): Promise<HttpsEdge>;
  createHttpsEdge(body: HttpsEdgeWrite, options?: RequestOptions): Promise<HttpsEdge>;
  updateHttpsEdge(id: string, body: HttpsEdgeWrite, options?: RequestOptions): Promise<HttpsEdge>;
  deleteHttpsEdge(id: string, options?: RequestOptions): Promise<void>;

  getRoute(edgeId: string, routeId: string, options?: RequestOptions): Promise<HttpsRoute>;
  createRoute(edgeId: string, body: RouteCreate, options?: RequestOptions): Promise<HttpsRoute>;
  updateRoute(
    edgeId: string,
    routeId: string,
    body: RouteUpdate,
    options?: RequestOptions,
  ): Promise<HttpsRoute>;
  deleteRoute(edgeId: string, routeId: string, options?: RequestOptions): Promise<void>;

  getModule<K extends ModuleOwnerKind, M extends ModuleName<K>>(
    owner: OwnerOf<K>,
    module: M,
    options?: RequestOptions,
  ): Promise<ModuleRead<K, M>>;
  getModule(owner: ModuleOwner, module: AnyModuleName, options?: RequestOptions): Promise<unknown>;
  /** PUT replaces the module whole (or sets it); answers the module's read shape. */
  putModule<K extends ModuleOwnerKind, M extends ModuleName<K>>(
    owner: OwnerOf<K>,
    module: M,
    body: ModuleWrite<K, M>,
    options?: RequestOptions,
  ): Promise<ModuleRead<K, M>>;
  putModule(
    owner: ModuleOwner,
    module: AnyModuleName,
    body: Readonly<Record<string, unknown>>,
    options?: RequestOptions,
  ): Promise<unknown>;
  /** 204 also when the module was not set. */
  deleteModule(owner: ModuleOwner, module: AnyModuleName, options?: RequestOptions): Promise<void>;

  getBotUser(id: string, options?: RequestOptions): Promise<BotUser>;
  createBotUser(body: BotUserCreate, options?: RequestOptions): Promise<BotUser>;
  updateBotUser(id: string, body: BotUserUpdate, options?: RequestOptions): Promise<BotUser>;
  deleteBotUser(id: string, options?: RequestOptions): Promise<void>;

  getEndpoint(id: string, options?: RequestOptions): Promise<CloudEndpoint>;
  createEndpoint(body: EndpointCreate, options?: RequestOptions): Promise<CloudEndpoint>;
  /** Partial: absent fields are left as they are. */
  updateEndpoint(
    id: string,
    body: EndpointUpdate,
    options?: RequestOptions,
  ): Promise<CloudEndpoint>;
  deleteEndpoint(id: string, options?: RequestOptions): Promise<void>;

  // ---- account resources: reserved domains, certificate authorities, service users
  listReservedDomains(options?: ListOptions): Promise<ListResult<ReservedDomain>>;
  getReservedDomain(id: string, options?: RequestOptions): Promise<ReservedDomain>;
  createReservedDomain(
    body: ReservedDomainCreate,
    options?: RequestOptions,
  ): Promise<ReservedDomain>;
  /** Partial: absent fields are left as they are. */
  updateReservedDomain(
    id: string,
    body: ReservedDomainUpdate,
    options?: RequestOptions,
  ): Promise<ReservedDomain>;
  /** Gives the domain back to the pool, where anyone may reserve it. */
  deleteReservedDomain(id: string, options?: RequestOptions): Promise<void>;
  /** Detaches an uploaded certificate. */
  deleteReservedDomainCertificate(id: string, options?: RequestOptions): Promise<void>;
  /** Stops managed certificates. */
  deleteReservedDomainCertificateManagementPolicy(
    id: string,
    options?: RequestOptions,
  ): Promise<void>;

  listCertificateAuthorities(options?: ListOptions): Promise<ListResult<CertificateAuthority>>;
  getCertificateAuthority(id: string, options?: RequestOptions): Promise<CertificateAuthority>;
  createCertificateAuthority(
    body: CertificateAuthorityCreate,
    options?: RequestOptions,
  ): Promise<CertificateAuthority>;
  updateCertificateAuthority(
    id: string,
    body: CertificateAuthorityUpdate,
    options?: RequestOptions,
  ): Promise<CertificateAuthority>;
  deleteCertificateAuthority(id: string, options?: RequestOptions): Promise<void>;

  /** The bot users' records under their successor name (`bot_` IDs). */
  listServiceUsers(options?: ListOptions): Promise<ListResult<ServiceUser>>;
  getServiceUser(id: string, options?: RequestOptions): Promise<ServiceUser>;
  createServiceUser(body: ServiceUserCreate, options?: RequestOptions): Promise<ServiceUser>;
  updateServiceUser(
    id: string,
    body: ServiceUserUpdate,
    options?: RequestOptions,
  ): Promise<ServiceUser>;
  deleteServiceUser(id: string, options?: RequestOptions): Promise<void>;
  // ---- end of account resources
  // ---- IP policies and vaults ----
  listIpPolicies(options?: ListOptions): Promise<ListResult<IpPolicy>>;
  getIpPolicy(id: string, options?: RequestOptions): Promise<IpPolicy>;
  createIpPolicy(body: IpPolicyWrite, options?: RequestOptions): Promise<IpPolicy>;
  updateIpPolicy(id: string, body: IpPolicyWrite, options?: RequestOptions): Promise<IpPolicy>;
  /** Its rules go with it. */
  deleteIpPolicy(id: string, options?: RequestOptions): Promise<void>;

  /** Every rule of every policy of the account (there is no per-policy list). */
  listIpPolicyRules(options?: ListOptions): Promise<ListResult<IpPolicyRule>>;
  getIpPolicyRule(id: string, options?: RequestOptions): Promise<IpPolicyRule>;
  createIpPolicyRule(body: IpPolicyRuleCreate, options?: RequestOptions): Promise<IpPolicyRule>;
  /** A rule's action and policy never change in place: delete it and create it anew. */
  updateIpPolicyRule(
    id: string,
    body: IpPolicyRuleUpdate,
    options?: RequestOptions,
  ): Promise<IpPolicyRule>;
  deleteIpPolicyRule(id: string, options?: RequestOptions): Promise<void>;

  listVaults(options?: ListOptions): Promise<ListResult<Vault>>;
  getVault(id: string, options?: RequestOptions): Promise<Vault>;
  createVault(body: VaultCreate, options?: RequestOptions): Promise<Vault>;
  updateVault(id: string, body: VaultUpdate, options?: RequestOptions): Promise<Vault>;
  /** Refused (23003) while the vault holds secrets. */
  deleteVault(id: string, options?: RequestOptions): Promise<void>;
  /** The secrets of one vault. */
  listVaultSecrets(vaultId: string, options?: ListOptions): Promise<ListResult<Secret>>;

  /** Every secret of every vault of the account. */
  listSecrets(options?: ListOptions): Promise<ListResult<Secret>>;
  getVaultSecret(id: string, options?: RequestOptions): Promise<Secret>;
  /** The answer never holds the value. */
  createVaultSecret(body: SecretCreate, options?: RequestOptions): Promise<Secret>;
  updateVaultSecret(id: string, body: SecretUpdate, options?: RequestOptions): Promise<Secret>;
  deleteVaultSecret(id: string, options?: RequestOptions): Promise<void>;
  // ---- end of IP policies and vaults ----

  /**
   * Destroys the connections of the exchange the client created, idle or in use (an injected
   * exchange is left alone): a process or test can exit at once.
   */
  close(): Promise<void>;
}
