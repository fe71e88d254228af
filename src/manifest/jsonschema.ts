/**
 * The JSON Schema (draft 2020-12) of one manifest document, generated from the same zod schemas
 * that validate manifests (`edgesync schema`; committed as schema/edgesync.schema.json for
 * editors). Input shapes: defaults are optional, and every field that accepts a `{ env }` /
 * `{ file }` reference (REFABLE) gets that alternative. Rules that need several fields or the
 * whole set (semantics.ts) are not expressible here; `edgesync validate` checks them.
 */
import { z } from 'zod';
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

export function manifestJsonSchema(): JsonObject {
  const secretRef = z.toJSONSchema(SecretRefSchema, { target: 'draft-2020-12', io: 'input' });
  delete secretRef.$schema;
  const generated = z.toJSONSchema(ManifestDocumentSchema, {
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
  return {
    $schema,
    $id: SCHEMA_ID,
    title: 'edgesync manifest',
    description:
      'One YAML document of an edgesync manifest file: a TLSEdge, an HTTPSEdge (with routes), a BotUser or a CloudEndpoint. A file may hold several documents separated by ---.',
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

/** The exact text `edgesync schema` prints and schema/edgesync.schema.json holds. */
export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}
