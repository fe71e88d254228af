/**
 * The JSON Schema (draft 2020-12) of one manifest document, generated from the same zod schemas
 * that validate manifests (`edgesync schema`; committed as schema/edgesync.schema.json for
 * editors). Input shapes: defaults are optional, and every field that accepts a `{ env }` /
 * `{ file }` reference (REFABLE) gets that alternative. Rules that need several fields or the
 * whole set (semantics.ts) are not expressible here; `edgesync validate` checks them.
 *
 * Every registered kind is in it: the four whose documents the loader shapes (schema.ts), then
 * each kind whose definition carries its schema (src/kinds/), described by its definition.
 */
import { z } from 'zod';
import { KINDS, type KindDefinition } from '../kinds/index.js';
import { ManifestDocumentSchema, REFABLE, SecretRefSchema, TEXT_OR_MAPPING } from './schema.js';

export const SCHEMA_ID = 'urn:edgesync:schema:manifest:1';

type JsonObject = Record<string, unknown>;

/**
 * Formats zod writes for its own string checks (`startsWith` and the like) that JSON Schema does
 * not define: a standard validator refuses the schema (Ajv in strict mode) or ignores them. The
 * `pattern` beside each states the same rule, so they are left out.
 */
const ZOD_ONLY_FORMATS: ReadonlySet<unknown> = new Set([
  'starts_with',
  'ends_with',
  'includes',
  'lowercase',
  'uppercase',
]);

/** The kinds whose definitions carry their manifest's schema. */
function definedKinds(kinds: readonly KindDefinition[]): KindDefinition[] {
  return kinds.filter((k) => k.planner === undefined && k.schema !== undefined);
}

/** One document's schema: the four kinds' union, with every defined kind's schema beside. */
function documentSchema(defined: readonly KindDefinition[]): z.ZodType {
  if (defined.length === 0) return ManifestDocumentSchema;
  const options = [...ManifestDocumentSchema.options, ...defined.map((k) => k.schema)];
  return z.discriminatedUnion('kind', options as unknown as typeof ManifestDocumentSchema.options);
}

/** `a TLSEdge, ..., a BotUser or a CloudEndpoint`: every kind a document may be. */
function kindsInWords(defined: readonly KindDefinition[]): string {
  const names = [
    'a TLSEdge',
    'an HTTPSEdge (with routes)',
    'a BotUser',
    'a CloudEndpoint',
    ...defined.map(
      (k) => `${/^[AEIOU]/.test(k.manifestKinds[0]) ? 'an' : 'a'} ${k.manifestKinds[0]}`,
    ),
  ];
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * The schema of a document. `kinds`: the registered kinds (by default the registry); those
 * carrying a schema are added to the four.
 */
export function manifestJsonSchema(kinds: readonly KindDefinition[] = KINDS): JsonObject {
  const defined = definedKinds(kinds);
  const secretRef = z.toJSONSchema(SecretRefSchema, { target: 'draft-2020-12', io: 'input' });
  delete secretRef.$schema;
  const generated = z.toJSONSchema(documentSchema(defined), {
    target: 'draft-2020-12',
    io: 'input',
    override: (ctx) => {
      const node = ctx.jsonSchema as JsonObject;
      if (ZOD_ONLY_FORMATS.has(node.format) && typeof node.pattern === 'string') delete node.format;
      const zodSchema = ctx.zodSchema as unknown as z.ZodType;
      if (TEXT_OR_MAPPING.has(zodSchema)) {
        const { description, ...mapping } = ctx.jsonSchema as JsonObject;
        const target = ctx.jsonSchema as JsonObject;
        for (const key of Object.keys(target)) delete target[key];
        Object.assign(target, {
          description,
          anyOf: [
            mapping,
            { type: 'string', description: 'The same document as YAML or JSON text.' },
          ],
        });
        return;
      }
      if (!REFABLE.has(zodSchema)) return;
      // Rewrite in place: the generator keeps a reference to this object. A field's description
      // stays beside the alternatives, where readers (and the reference docs) look for it.
      const { description, ...original } = ctx.jsonSchema as JsonObject;
      const target = ctx.jsonSchema as JsonObject;
      for (const key of Object.keys(target)) delete target[key];
      if (description !== undefined) target.description = description;
      target.anyOf = [original, { $ref: '#/$defs/SecretRef' }];
    },
  }) as JsonObject;
  const { $schema, $defs, ...rest } = generated;
  describeKinds(rest, defined);
  return {
    $schema,
    $id: SCHEMA_ID,
    title: 'edgesync manifest',
    description: `One YAML document of an edgesync manifest file: ${kindsInWords(defined)}. A file may hold several documents separated by ---.`,
    ...rest,
    $defs: {
      ...(typeof $defs === 'object' && $defs !== null ? $defs : {}),
      SecretRef: {
        description:
          'A value kept outside the manifest: { env: NAME } reads an environment variable, { file: PATH } a file relative to the manifest (one trailing newline dropped). Such values are sensitive.',
        ...secretRef,
      },
    },
  };
}

/** Gives each defined kind's document its definition's description, unless its schema has one. */
function describeKinds(schema: JsonObject, defined: readonly KindDefinition[]): void {
  const documents = Array.isArray(schema.oneOf) ? (schema.oneOf as JsonObject[]) : [];
  for (const doc of documents) {
    const kind = ((doc.properties as JsonObject | undefined)?.kind as JsonObject | undefined)
      ?.const;
    const def = defined.find((k) => k.manifestKinds.includes(kind as string));
    if (def !== undefined && doc.description === undefined) doc.description = def.description;
  }
}

/** The exact text `edgesync schema` prints and schema/edgesync.schema.json holds. */
export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}
