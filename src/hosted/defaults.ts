/**
 * The hosted service's defaults: what it stores when a write leaves a field out (api-notes,
 * "Rules of the hosted service", defaults table; session timers and `options_passthrough` are
 * what the service records for a module that does not set them). One table, read by:
 * - the local server, to store exactly these values;
 * - the planner, for which an unset manifest field means this value, not "whatever is live",
 *   so drift away from a default shows in `plan` and `apply` corrects it;
 * - `import`, which writes a field only when its live value differs from this;
 * - the manifest reference, docs/reference/manifests.md (a test keeps the two equal).
 * Besides these, every module's `enabled` defaults to true and a bot user's `active` to true;
 * the manifest schema fills both. Pure.
 */
import { DEFAULT_NAMEID_FORMAT } from './edge-api.js';

export type DefaultValue = string | number | boolean;

export const MODULE_DEFAULTS: Readonly<Record<string, Readonly<Record<string, DefaultValue>>>> = {
  // `min_version` only where TLS terminates here (it is null under `terminate_at: upstream`).
  tls_termination: { terminate_at: 'edge', min_version: '1.2' },
  circuit_breaker: { error_threshold_percentage: 0 },
  oauth: {
    cookie_prefix: 'svc.',
    options_passthrough: false,
    inactivity_timeout: 0,
    maximum_duration: 0,
    auth_check_interval: 0,
  },
  oidc: {
    cookie_prefix: '',
    options_passthrough: false,
    inactivity_timeout: 0,
    maximum_duration: 0,
  },
  saml: {
    cookie_prefix: '',
    options_passthrough: false,
    inactivity_timeout: 0,
    maximum_duration: 0,
    force_authn: false,
    allow_idp_initiated: true,
    nameid_format: DEFAULT_NAMEID_FORMAT,
  },
};

/** The fields with a default, per module (a converged plan asks for 70,000 modules). */
const DEFAULTED_FIELDS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries(MODULE_DEFAULTS).map(([module, table]) => [module, Object.keys(table)]),
);

/** The default of `field` in `module` given the rest of the module's value, or undefined. */
export function moduleDefault(
  module: string,
  field: string,
  value: Readonly<Record<string, unknown>>,
): DefaultValue | undefined {
  if (module === 'tls_termination' && field === 'min_version') {
    return (value.terminate_at ?? 'edge') === 'upstream' ? undefined : '1.2';
  }
  return MODULE_DEFAULTS[module]?.[field];
}

/**
 * Calls `fill` with each documented default `value` leaves unset (undefined or null), in the
 * table's order. The defaults depend only on `value` (`min_version` on `terminate_at`, whose own
 * default is `edge`), so callers can fill them into a copy of their own.
 */
export function forEachMissingDefault(
  module: string,
  value: Readonly<Record<string, unknown>>,
  fill: (field: string, value: DefaultValue) => void,
): void {
  const fields = DEFAULTED_FIELDS.get(module);
  if (fields === undefined) return;
  for (const field of fields) {
    const current = value[field];
    if (current !== undefined && current !== null) continue;
    const d = moduleDefault(module, field, value);
    if (d !== undefined) fill(field, d);
  }
}
