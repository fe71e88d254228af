/**
 * The zod building blocks of the manifest's field kinds: the marks that say where a `{ env }` /
 * `{ file }` reference may stand in for a value (REFABLE) or a mapping may be written as text
 * (TEXT_OR_MAPPING), and the checked strings and numbers the module definitions are made of.
 * Every message here is what a manifest author reads, so they are worded for people.
 */
import { z } from 'zod';
import { LIMITS, type RuleViolation } from '../edge-api.js';

/**
 * Schemas at which a `{ env }` / `{ file }` reference may stand in for the value. The resolver
 * (`src/manifest/refs.ts`) and the JSON Schema generator (`src/manifest/jsonschema.ts`) both ask
 * this set, so the two can never disagree about where a reference is allowed.
 */
export const REFABLE: WeakSet<z.ZodType> = new WeakSet();

export function refable<T extends z.ZodType>(schema: T): T {
  REFABLE.add(schema);
  return schema;
}

/**
 * Mappings that may also be written as a string holding the same document in YAML or JSON (a
 * cloud endpoint's traffic policy): the shape phase reads the string before the schema checks
 * the mapping, and the JSON Schema offers both forms.
 */
export const TEXT_OR_MAPPING: WeakSet<z.ZodType> = new WeakSet();

export function textOrMapping<T extends z.ZodType>(schema: T): T {
  TEXT_OR_MAPPING.add(schema);
  return schema;
}

export const text = () => refable(z.string());
export const nonEmptyText = () => refable(z.string().min(1, { error: 'must not be empty' }));

export const uint32 = () =>
  z
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must be at least 0' })
    .max(LIMITS.uint32Max, { error: `must be at most ${LIMITS.uint32Max} (uint32)` });

export const positiveUint32 = () =>
  z
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be greater than 0' })
    .max(LIMITS.uint32Max, { error: `must be at most ${LIMITS.uint32Max} (uint32)` });

/** A list whose entries are non-empty and unique (optionally ignoring case). */
export function uniqueList<T extends z.ZodType<string>>(
  item: T,
  options: { ignoreCase?: boolean } = {},
) {
  return z.array(item).superRefine((list, ctx) => {
    if (list.length < 2) return; // most lists: nothing can repeat
    const seen = new Set<string>();
    for (let i = 0; i < list.length; i++) {
      const entry = list[i] as string;
      const key = options.ignoreCase ? entry.toLowerCase() : entry;
      if (seen.has(key)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `duplicate entry "${entry}"` });
      }
      seen.add(key);
    }
  });
}

export const lowerCase = (what: string) =>
  refable(
    z
      .string()
      .min(1, { error: 'must not be empty' })
      .refine((v) => v === v.toLowerCase(), { error: `${what} must be lower-case` }),
  );

export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}[A-Za-z0-9]+$`);
}

/** A string checked by one of the hosted service's rules (src/hosted/edge-api.ts), with its message. */
export const ruled = (check: (value: string) => RuleViolation | undefined) =>
  z.string().superRefine((value, ctx) => {
    const violation = check(value);
    if (violation !== undefined) ctx.addIssue({ code: 'custom', message: violation.message });
  });

/**
 * Whether `value` is what JSON can carry: strings, finite numbers, booleans, null, lists and
 * mappings of those (what YAML adds is `.inf` and `.nan`). Iterative: input depth is the
 * attacker's.
 */
export function isJsonTree(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      for (const key in v) stack.push((v as Record<string, unknown>)[key]);
    } else {
      return false;
    }
  }
  return true;
}

/**
 * A mapping of JSON values. Not `z.record(z.string(), z.json())`: `z.json()` is recursive, and a
 * recursive schema cannot be compiled (`z.compile`), which makes every manifest slower to check.
 */
export const jsonMapping = () =>
  z
    .record(z.string(), z.unknown().meta({ description: 'Any JSON value.' }))
    .refine(isJsonTree, { error: 'must hold JSON values only (no .inf or .nan)' });
