/**
 * The modules whose translation has gaps: authentication (OAuth, OIDC, SAML) with its allow
 * lists, the circuit breaker's limits, and a module's own traffic policy merged under the route's
 * guard. Pure.
 */
import { parse } from 'yaml';
import type { AUTH_MODULES } from '../hosted/modules/index.js';
import { actionSpec, type PhaseKey, POLICY_LIMITS, phaseOf } from '../hosted/policy-actions.js';
import type { FieldPath } from '../manifest/paths.js';
import type { RouteManifest } from '../manifest/schema.js';
import { type Action, duration, type Rule } from './actions.js';
import type { Emit, Source } from './source.js';

export interface Auth {
  readonly action: Action;
  /** Where the module is, for a diagnostic about the action as a whole. */
  readonly path: FieldPath;
  readonly module: (typeof AUTH_MODULES)[number];
  /** The allow lists a `deny` rule enforces after the action (OAuth only). */
  readonly addresses: readonly string[];
  readonly domains: readonly string[];
}

type OAuthSettings = NonNullable<NonNullable<RouteManifest['oauth']>['provider']['github']>;

const MANAGED_APP_UNAVAILABLE = new Set(['amazon', 'facebook']);

/**
 * The session settings OAuth and OpenID Connect share. The idle timer's name differs: `oauth`
 * calls it `idle_session_timeout`, `openid-connect` `idle_session_duration` (as documented).
 * An edge's `cookie_prefix` kept its sessions apart from other apps' on the same domain; the
 * action's `auth_id` scopes the session cookie the same way.
 */
function sessionConfig(
  module: {
    options_passthrough?: boolean | undefined;
    inactivity_timeout?: number | undefined;
    maximum_duration?: number | undefined;
    cookie_prefix?: string | undefined;
  },
  config: Record<string, unknown>,
  idle: 'idle_session_timeout' | 'idle_session_duration',
): void {
  if (module.options_passthrough !== undefined)
    config.allow_cors_preflight = module.options_passthrough;
  // 0 is "never" on an edge, and no duration on an endpoint: the endpoint's own timer applies.
  if (module.inactivity_timeout) config[idle] = duration(module.inactivity_timeout);
  if (module.maximum_duration) config.max_session_duration = duration(module.maximum_duration);
  const prefix = module.cookie_prefix?.replace(/\.+$/, '');
  if (prefix) config.auth_id = prefix;
}

export function authAction(
  route: RouteManifest,
  path: FieldPath,
  source: Source,
  emit: Emit,
): Auth | undefined {
  if (route.oauth?.enabled) return oauth(route.oauth, [...path, 'oauth'], source, emit);
  if (route.oidc?.enabled) return oidc(route.oidc, [...path, 'oidc'], source, emit);
  if (route.saml?.enabled) return saml(route.saml, [...path, 'saml'], source, emit);
  return undefined;
}

function oauth(
  module: NonNullable<RouteManifest['oauth']>,
  path: FieldPath,
  source: Source,
  emit: Emit,
): Auth {
  // Semantics checked that exactly one provider is set.
  const [provider, found] = Object.entries(module.provider).find(([, v]) => v !== undefined)!;
  const settings: OAuthSettings = found ?? {};
  const at = [...path, 'provider', provider];
  const config: Record<string, unknown> = { provider };
  if (settings.client_id !== undefined)
    config.client_id = source.keep([...at, 'client_id'], settings.client_id);
  if (settings.client_secret !== undefined)
    config.client_secret = source.keep([...at, 'client_secret'], settings.client_secret);
  if (settings.scopes !== undefined)
    config.scopes = source.keep([...at, 'scopes'], settings.scopes);
  if (settings.client_id === undefined && MANAGED_APP_UNAVAILABLE.has(provider)) {
    emit(
      at,
      'error',
      `the ${provider} provider needs the app's own client_id and client_secret on a cloud endpoint`,
    );
  }
  sessionConfig(module, config, 'idle_session_timeout');
  if (module.auth_check_interval)
    config.userinfo_refresh_interval = duration(module.auth_check_interval);
  const addresses = source.literals(
    [...at, 'email_addresses'],
    settings.email_addresses ?? [],
    emit,
  );
  const domains = source.literals([...at, 'email_domains'], settings.email_domains ?? [], emit);
  githubGaps(settings, at, addresses.length + domains.length > 0, emit);
  return { action: { type: 'oauth', config }, path, module: 'oauth', addresses, domains };
}

/**
 * GitHub teams and organizations cannot be checked by a policy. With an email list beside them
 * the endpoint admits fewer users than the edge did (a warning); alone, dropping them would admit
 * every GitHub user (an error).
 */
function githubGaps(
  settings: {
    teams?: readonly string[] | undefined;
    organizations?: readonly string[] | undefined;
  },
  at: FieldPath,
  listed: boolean,
  emit: Emit,
): void {
  for (const field of ['teams', 'organizations'] as const) {
    if (!settings[field]?.length) continue;
    if (listed) {
      emit(
        [...at, field],
        'warning',
        `GitHub ${field} cannot be checked by a policy: only the email lists admit users`,
      );
    } else {
      emit(
        [...at, field],
        'error',
        `GitHub ${field} cannot be checked by a policy, and without them every GitHub user would be admitted`,
      );
    }
  }
}

function oidc(
  module: NonNullable<RouteManifest['oidc']>,
  path: FieldPath,
  source: Source,
  _emit: Emit,
): Auth {
  const config: Record<string, unknown> = {
    issuer_url: source.keep([...path, 'issuer'], module.issuer),
  };
  if (module.client_id !== undefined)
    config.client_id = source.keep([...path, 'client_id'], module.client_id);
  if (module.client_secret !== undefined)
    config.client_secret = source.keep([...path, 'client_secret'], module.client_secret);
  if (module.scopes !== undefined) config.scopes = source.keep([...path, 'scopes'], module.scopes);
  sessionConfig(module, config, 'idle_session_duration');
  return {
    action: { type: 'openid-connect', config },
    path,
    module: 'oidc',
    addresses: [],
    domains: [],
  };
}

const SAML_DROPPED = [
  'force_authn',
  'allow_idp_initiated',
  'nameid_format',
  'cookie_prefix',
  'options_passthrough',
] as const;

/**
 * The `saml` action takes `idp_metadata` only: without these timers a session would go on after
 * the edge had ended it, admitting requests the edge refused.
 */
const SAML_TIMERS = ['inactivity_timeout', 'maximum_duration'] as const;

function saml(
  module: NonNullable<RouteManifest['saml']>,
  path: FieldPath,
  source: Source,
  emit: Emit,
): Auth {
  emit(
    path,
    'warning',
    'the service documents no SAML action for traffic policy (its saml action is early access): check that your account offers it',
  );
  for (const field of SAML_DROPPED) {
    if (module[field] !== undefined)
      emit([...path, field], 'warning', `SAML ${field} has no equivalent: it is dropped`);
  }
  for (const field of SAML_TIMERS) {
    if (module[field] !== undefined)
      emit(
        [...path, field],
        'error',
        `SAML ${field} has no equivalent: sessions would outlive what the edge allowed`,
      );
  }
  if (module.authorized_groups?.length) {
    emit(
      [...path, 'authorized_groups'],
      'error',
      'SAML authorized_groups cannot be checked by a policy, and without them every user of the IdP would be admitted',
    );
  }
  const config = { idp_metadata: source.keep([...path, 'idp_metadata'], module.idp_metadata) };
  return { action: { type: 'saml', config }, path, module: 'saml', addresses: [], domains: [] };
}

/** The longest window and tripped duration a cloud endpoint's breaker takes, in seconds. */
const BREAKER_MAX_SECONDS = POLICY_LIMITS.breakerWindowMaxMs / 1000;

/**
 * `circuit-breaker`. A tripped duration over the action's bound (two minutes) would let requests
 * through while the edge still refused them (an error); a longer window only changes the
 * statistics (a warning). The bounds and the fixed bucket count are the action table's.
 */
export function circuitBreaker(
  cb: NonNullable<RouteManifest['circuit_breaker']>,
  path: FieldPath,
  emit: Emit,
): Action {
  const max = duration(BREAKER_MAX_SECONDS);
  const config: Record<string, unknown> = {};
  if (cb.error_threshold_percentage !== undefined)
    config.error_threshold = cb.error_threshold_percentage;
  if (cb.volume_threshold !== undefined) config.volume_threshold = cb.volume_threshold;
  if (cb.rolling_window !== undefined) {
    if (cb.rolling_window > BREAKER_MAX_SECONDS)
      emit(
        [...path, 'rolling_window'],
        'warning',
        `a window over ${max} cannot be expressed: it becomes ${max}`,
      );
    config.window_duration = duration(Math.min(cb.rolling_window, BREAKER_MAX_SECONDS));
  }
  if (cb.tripped_duration !== undefined) {
    if (cb.tripped_duration > BREAKER_MAX_SECONDS)
      emit(
        [...path, 'tripped_duration'],
        'error',
        `a tripped duration over ${max} cannot be expressed: the endpoint would let requests through sooner than the edge`,
      );
    config.tripped_duration = duration(Math.min(cb.tripped_duration, BREAKER_MAX_SECONDS));
  }
  if (cb.num_buckets !== undefined) {
    // Accepted and ignored by the action: kept so the endpoint reads as the edge did.
    config.num_buckets = cb.num_buckets;
    if (cb.num_buckets !== POLICY_LIMITS.breakerBuckets)
      emit(
        [...path, 'num_buckets'],
        'warning',
        `the bucket count is fixed at ${POLICY_LIMITS.breakerBuckets} on a cloud endpoint (num_buckets is kept but ignored)`,
      );
  }
  config.enforce = true;
  return { type: 'circuit-breaker', config };
}

type Phase = 'tls' | 'http_request' | 'http_response';

const PHASE_KEYS: Record<Phase, readonly string[]> = {
  tls: ['on_tcp_connect'],
  http_request: ['on_http_request', 'inbound'],
  http_response: ['on_http_response', 'outbound'],
};

/**
 * An action the endpoint's policy cannot hold (a type cloud endpoints do not know, or not in
 * this phase) is an error: dropping it could let through what the edge's policy stopped, and
 * keeping it would be refused by the service (2201, 2202).
 */
function checkAction(action: Action, phase: string, at: FieldPath, emit: Emit): void {
  const type = typeof action?.type === 'string' ? action.type : undefined;
  const spec = type === undefined ? undefined : actionSpec(type);
  if (type === undefined || spec === undefined) {
    emit(
      at,
      'error',
      `the policy's action ${JSON.stringify(type ?? null)} has no cloud endpoint equivalent: rewrite it with the actions cloud endpoints support, or remove it on purpose before migrating`,
    );
  } else if (!(spec.phases as readonly string[]).includes(phase)) {
    emit(at, 'error', `the policy's action "${type}" cannot run in ${phase} on a cloud endpoint`);
  }
}

interface WrittenRule {
  name?: unknown;
  expressions?: unknown;
  actions?: unknown;
}

/**
 * A module's own traffic policy: the rules of `phase`, each under `guards`, named after where
 * they came from. Rules of a phase the endpoint cannot run them in are located errors (they may
 * restrict traffic), reported once, on the request-phase pass.
 */
export function routePolicyRules(
  value: string,
  path: FieldPath,
  label: string,
  guards: readonly string[],
  source: Source,
  emit: Emit,
  phase: Phase,
): Rule[] {
  const at = [...path, 'value'];
  if (source.isReference(at)) {
    emit(
      at,
      'error',
      'a traffic policy read from env or file cannot be merged into the endpoint policy: write it in the manifest',
    );
    return [];
  }
  const doc = parse(value) as Record<string, unknown> | null;
  if (typeof doc !== 'object' || doc === null) return [];
  if (phase !== 'http_response') {
    for (const key of Object.keys(doc)) {
      const known = Object.values(PHASE_KEYS).some((keys) => keys.includes(key));
      const usable = phase === 'tls' ? PHASE_KEYS.tls.includes(key) : !PHASE_KEYS.tls.includes(key);
      if (!known || !usable)
        emit(
          [...at, key],
          'error',
          `the policy's ${key} rules cannot run ${phase === 'tls' ? 'on a tls:// endpoint' : 'under a route'}`,
        );
    }
  }
  return PHASE_KEYS[phase].flatMap((key) => {
    const rules = Array.isArray(doc[key]) ? (doc[key] as WrittenRule[]) : [];
    return rules.map((rule, i) => {
      const own = Array.isArray(rule.expressions) ? rule.expressions.map(String) : [];
      const expressions = [...guards, ...own];
      const name = `${label} ${typeof rule.name === 'string' ? rule.name : `${key}[${i}]`}`;
      const actions = (Array.isArray(rule.actions) ? rule.actions : []) as Action[];
      actions.forEach((action, j) => {
        checkAction(action, phaseOf(key as PhaseKey), [...at, key, i, 'actions', j], emit);
      });
      const out: Rule = expressions.length > 0 ? { name, expressions, actions } : { name, actions };
      return out;
    });
  });
}
