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
import { type DefaultValue, MODULES_BY_NAME } from './modules/index.js';

export type { DefaultValue };

/**
 * Module -> field -> default, from the module definitions (./modules/): every field with a
 * default except those the manifest schema fills itself (`enabled`).
 */
export const MODULE_DEFAULTS: Readonly<Record<string, Readonly<Record<string, DefaultValue>>>> =
  defaultsTable();

function defaultsTable(): Record<string, Record<string, DefaultValue>> {
  const table: Record<string, Record<string, DefaultValue>> = {};
  for (const [module, def] of MODULES_BY_NAME) {
    for (const [field, f] of Object.entries(def.fields)) {
      if (f.default === undefined || f.presence === 'filled') continue;
      table[module] ??= {};
      table[module][field] = f.default;
    }
  }
  return table;
}

/** When a default applies only given the rest of the module (`min_version`): module -> field -> test. */
const DEFAULT_WHEN: ReadonlyMap<
  string,
  ReadonlyMap<string, (value: Readonly<Record<string, unknown>>) => boolean>
> = new Map(
  [...MODULES_BY_NAME].map(([module, def]) => [
    module,
    new Map(
      Object.entries(def.fields).flatMap(([field, f]) =>
        f.defaultWhen === undefined ? [] : [[field, f.defaultWhen] as const],
      ),
    ),
  ]),
);

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
  const when = DEFAULT_WHEN.get(module)?.get(field);
  if (when !== undefined && !when(value)) return undefined;
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
