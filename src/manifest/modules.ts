/**
 * The manifest's building blocks and module schemas (zod): the patterns, the field kinds (with
 * the places a `{ env }` / `{ file }` reference may stand in for a value) and each owner's
 * module schemas, in the API's write shape. The module schemas are the module definitions'
 * (src/hosted/modules/, where each field is stated once), keyed by the one ownership table.
 * The resources that hold the modules are ./schema.ts, which re-exports everything here.
 */
import { z } from 'zod';
import { LIMITS, utf8Bytes } from '../hosted/edge-api.js';
import { refable, text } from '../hosted/modules/blocks.js';
import * as modules from '../hosted/modules/index.js';

export {
  idPattern,
  isJsonTree,
  REFABLE,
  refable,
  ruled,
  TEXT_OR_MAPPING,
  textOrMapping,
  uniqueList,
} from '../hosted/modules/blocks.js';

/** Manifest names: the stable key of a resource, unique per kind. */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;
/** Environment variable names accepted in `{ env: NAME }`. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Label keys: conservative, so no key can be `__proto__` or need quoting anywhere. */
export const LABEL_KEY_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$/;
/** The label prefix edgesync keeps for itself (section 3 of the design). */
export const RESERVED_LABEL_PREFIX = 'edgesync/';

export const KINDS = ['TLSEdge', 'HTTPSEdge', 'ServiceUser', 'BotUser', 'CloudEndpoint'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The `kind:` names of a service user: the current name, then the former one (bot users), which
 * keeps working and means the same records (the registry's `bot_user` definition).
 */
export const SERVICE_USER_KINDS = ['ServiceUser', 'BotUser'] as const;
export type ServiceUserKind = (typeof SERVICE_USER_KINDS)[number];

/** Whether a document is a service user's, under either name. */
export function isServiceUser<T extends { readonly kind: unknown }>(
  value: T,
): value is Extract<T, { readonly kind: ServiceUserKind }> {
  return isServiceUserKind(value.kind);
}

/** Whether a manifest `kind:` is a service user's, under either name. */
export function isServiceUserKind(kind: unknown): kind is ServiceUserKind {
  return kind === 'ServiceUser' || kind === 'BotUser';
}

/** A reference to a value kept outside the manifest. */
export const SecretRefSchema = z.union([
  z.strictObject({
    env: z.string().regex(ENV_NAME_PATTERN, { error: 'must be an environment variable name' }),
  }),
  z.strictObject({ file: z.string().min(1, { error: 'must be a file path' }) }),
]);

// ---- building blocks --------------------------------------------------------------------------

/** A resource's manifest name (`name:`): its stable key, unique per kind. */
export const manifestName = () =>
  refable(
    z.string().regex(NAME_PATTERN, {
      error:
        'names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
    }),
  );

/** `suspend: true`: leave the live resource exactly as it is (no create, update or delete). */
export const suspendFlag = () =>
  z.boolean().optional().meta({
    description:
      'true: edgesync leaves this resource exactly as it is live (no create, update or delete) until it is false again.',
  });

export const describedText = () =>
  refable(
    z.string().refine((v) => utf8Bytes(v) <= LIMITS.descriptionBytes, {
      error: `must be at most ${LIMITS.descriptionBytes} bytes (UTF-8)`,
    }),
  );

export const labels = () =>
  z
    .record(
      z.string().regex(LABEL_KEY_PATTERN, {
        error:
          'label keys must be 1-128 characters of letters, digits, ".", "_", "-" and "/", starting and ending with a letter or digit',
      }),
      text(),
    )
    .default({});

// ---- modules (write shapes), from their definitions -------------------------------------------

/** Each owner's module schemas, keyed by sub-resource name (the resources' optional fields). */
export const MANIFEST_MODULES = modules.moduleSchemas('manifest');

/** OAuth: one optional key per identity provider; exactly one must be set (checked in semantics). */
export const OAuthSchema = modules.oauth.manifest;
