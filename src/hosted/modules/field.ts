/**
 * The shape of a module definition and what is derived from it. A field is stated once, with
 * its three schemas side by side (the manifest's, with friendly messages and `{ env }` /
 * `{ file }` where allowed; the client's strict write schema; the client's tolerant read
 * schema), its one-line description, whether it is required or sensitive, the service's default,
 * and values the service accepts and refuses (which a test sends to the local server). The
 * module's three zod objects are composed here, so no field is ever written twice.
 */
import { z } from 'zod';
import type { ErrorCode } from '../edge-api.js';

export type DefaultValue = string | number | boolean;

/**
 * `required`: in every body (manifest and API alike). `optional`: may be left out. `filled`: may
 * be left out of a body, and the manifest schema fills it (`enabled`, true).
 */
export type Presence = 'required' | 'optional' | 'filled';

export interface Field<
  M extends z.ZodType = z.ZodType,
  W extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  P extends Presence = Presence,
> {
  readonly presence: P;
  /** One line, shown in the manifest reference and the JSON Schema. */
  readonly description: string;
  /** The manifest's schema, before `.optional()`. */
  readonly manifest: M;
  /** The client's strict write schema, before `.optional()`. */
  readonly write: W;
  /** The client's read schema, nullability included. */
  readonly read: R;
  /** A secret: masked in every output, imported as an `{ env }` reference. */
  readonly sensitive?: boolean;
  /** What the service stores when a write leaves the field out. */
  readonly default?: DefaultValue;
  /** Whether the default applies, given the rest of the module (always, when absent). */
  readonly defaultWhen?: (module: Readonly<Record<string, unknown>>) => boolean;
  /** Compared lower-cased: a string, a mapping's keys, a list's entries. */
  readonly caseInsensitive?: boolean;
  /** Live records hold Refs under another key (`backend` for `backend_id`). */
  readonly live?: { readonly key: string; readonly refs: 'one' | 'many' };
  /** A mapping with exactly one key set, which is named even when all its fields are unset. */
  readonly oneOf?: boolean;
  /**
   * The service refuses a body without it, though the write shape leaves it optional: it stores
   * the field left out as 0, which is invalid, and answers this code (a circuit breaker's sizes).
   */
  readonly serviceRequired?: ErrorCode;
  /** The fields of a mapping with fields of its own (OAuth's provider, and each provider). */
  readonly nested?: Fields;
  /** Values the service accepts for this field, and values it refuses (400). */
  readonly probes: { readonly valid: readonly unknown[]; readonly invalid: readonly unknown[] };
}

export type Fields = Readonly<Record<string, Field>>;

type ManifestShape<F extends Fields> = {
  [K in keyof F]: F[K]['presence'] extends 'optional'
    ? z.ZodOptional<F[K]['manifest']>
    : F[K]['manifest'];
};
type WriteShape<F extends Fields> = {
  [K in keyof F]: F[K]['presence'] extends 'required'
    ? F[K]['write']
    : z.ZodOptional<F[K]['write']>;
};
type ReadShape<F extends Fields> = {
  [K in keyof F as F[K] extends { live: { key: infer L extends string } } ? L : K]: F[K]['read'];
};

/** Attaches a description without cloning the schema (a clone would lose its REFABLE mark). */
function described<T extends z.ZodType>(schema: T, description: string): T {
  z.globalRegistry.add(schema, { description });
  return schema;
}

export function manifestShape<F extends Fields>(fields: F): ManifestShape<F> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(fields)) {
    shape[name] = described(
      f.presence === 'optional' ? f.manifest.optional() : f.manifest,
      f.description,
    );
  }
  return shape as ManifestShape<F>;
}

export function writeShape<F extends Fields>(fields: F): WriteShape<F> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(fields)) {
    shape[name] = f.presence === 'required' ? f.write : f.write.optional();
  }
  return shape as WriteShape<F>;
}

export function readShape<F extends Fields>(fields: F): ReadShape<F> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(fields)) shape[f.live?.key ?? name] = f.read;
  return shape as ReadShape<F>;
}

/** One Edge API module: its fields, and the schemas composed from them. */
export interface ModuleDefinition<F extends Fields = Fields> {
  readonly description: string;
  readonly fields: F;
  /** Fields the service makes and returns, never written and never compared. */
  readonly serverFields: readonly string[];
  /** A complete body the service accepts (the base every probe varies one field of). */
  readonly example: Readonly<Record<string, unknown>>;
  readonly manifest: z.ZodType;
  readonly write: z.ZodType;
  readonly read: z.ZodType;
}

export function defineModule<
  const F extends Fields,
  S extends z.core.$ZodLooseShape = Record<never, never>,
>(spec: {
  readonly description: string;
  /** In the order live records are read (and `import` writes them). */
  readonly fields: F;
  /** The manifest's (and the JSON Schema's) order, where it differs from the read order. */
  readonly manifestOrder?: readonly (keyof F & string)[];
  readonly serverFields?: S;
  readonly example: Readonly<Record<string, unknown>>;
}) {
  const manifest = manifestShape(spec.fields);
  const ordered = spec.manifestOrder
    ? (Object.fromEntries(spec.manifestOrder.map((k) => [k, manifest[k]])) as typeof manifest)
    : manifest;
  const read = z.object({ ...readShape(spec.fields), ...(spec.serverFields ?? ({} as S)) });
  return {
    description: spec.description,
    fields: spec.fields,
    serverFields: Object.keys(spec.serverFields ?? {}),
    example: spec.example,
    manifest: z.strictObject(ordered).meta({ description: spec.description }),
    write: z.strictObject(writeShape(spec.fields)),
    read,
  } satisfies ModuleDefinition<F>;
}

// ---- field kinds shared by several modules ------------------------------------------------------

export const enabledField = () =>
  ({
    presence: 'filled',
    description: 'Whether the module is on (true when left out).',
    manifest: z.boolean().default(true),
    write: z.boolean(),
    read: z.boolean(),
    default: true,
    probes: { valid: [true, false], invalid: ['yes', 1] },
  }) as const satisfies Field;

/** Probes of an integer in [min, max]: both ends accepted, one past each refused. */
export const intProbes = (min: number, max: number) => ({
  valid: [min, max],
  invalid: [min - 1, max + 1, min + 0.5, String(min)],
});

/** Probes of an enumeration: every member accepted, a stranger refused. */
export const enumProbes = (values: readonly string[]) => ({
  valid: values,
  invalid: ['not-a-member', 1],
});
