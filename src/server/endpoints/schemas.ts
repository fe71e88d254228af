/**
 * The write shapes of the endpoints API (EndpointCreate, EndpointUpdate) as zod schemas, through
 * the server's shared body validation (unknown fields 214, invalid values 215). The rules that
 * need more than a field's own value (URLs, bindings, the policy, uniqueness) run after, in the
 * handlers, each with its own code.
 */
import { z } from 'zod';
import { utf8Bytes } from '../../hosted/edge-api.js';
import { obj } from '../schema-blocks.js';
import { BINDINGS, ENDPOINT_ERROR_CODE, ENDPOINT_LIMITS } from './codes.js';

const bytes = (field: string, max: number, code: string) =>
  z.string().refine((v) => utf8Bytes(v) <= max, {
    message: `${field} must be at most ${max} bytes`,
    params: { code },
  });

const fields = {
  url: z.string(),
  traffic_policy: z.string().min(1, 'traffic_policy must be a non-empty YAML or JSON document'),
  description: bytes(
    'description',
    ENDPOINT_LIMITS.descriptionBytes,
    ENDPOINT_ERROR_CODE.descriptionTooLong,
  ).optional(),
  metadata: bytes(
    'metadata',
    ENDPOINT_LIMITS.metadataBytes,
    ENDPOINT_ERROR_CODE.metadataTooLong,
  ).optional(),
  /** At most one binding; none means the default for the URL. */
  bindings: z.array(z.enum(BINDINGS)).max(1, 'bindings takes at most one binding').optional(),
  pooling_enabled: z.boolean().optional(),
};

export const endpointCreateSchema = obj({
  ...fields,
  type: z
    .string()
    .refine((t) => t === 'cloud', { message: 'only cloud endpoints can be created' })
    .optional(),
});

export const endpointUpdateSchema = obj({
  url: fields.url.optional(),
  traffic_policy: fields.traffic_policy.optional(),
  description: fields.description,
  metadata: fields.metadata,
  bindings: fields.bindings,
  pooling_enabled: fields.pooling_enabled,
});
