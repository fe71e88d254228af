/**
 * Building blocks of the local server's write schemas: strict objects whose unknown-field error
 * lists the accepted fields (ERR_SVC_214), prefixed IDs (227), unique lists, bounded integers,
 * and the hosted service's rules (src/hosted/edge-api.ts) as zod issues with their error codes.
 */
import { z } from 'zod';
import {
  BACKEND_ID_PATTERN,
  checkHostport,
  ERROR_CODE,
  LIMITS,
  type RuleViolation,
  utf8Bytes,
} from '../hosted/edge-api.js';

/** A strict object whose unknown-field error names every accepted field (ERR_SVC_214). */
export function obj<T extends z.core.$ZodLooseShape>(shape: T) {
  const accepted = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; accepted fields: ${accepted}`
        : undefined,
  });
}

export const wrongPrefix = { code: ERROR_CODE.wrongIdPrefix };

export function prefixedId(prefix: string, what: string) {
  return z.string().refine((v) => v.startsWith(prefix) && v.length > prefix.length, {
    message: `${what} must start with "${prefix}"`,
    params: wrongPrefix,
  });
}

export const backendId = z.string().refine((v) => BACKEND_ID_PATTERN.test(v), {
  message: 'backend_id must be a backend ID (bkd..._...)',
  params: wrongPrefix,
});

/** A list of distinct, non-empty strings. */
export function uniqueList(
  item: z.ZodType<string> = z.string().min(1, 'entries must be non-empty'),
) {
  return z.array(item).refine((list) => new Set(list).size === list.length, {
    message: 'entries must be unique',
  });
}

export const uint32 = z.number().int().min(0).max(LIMITS.uint32Max);
export const enabled = z.boolean().optional().default(true);

export const descriptionSchema = z.string().refine((v) => utf8Bytes(v) <= LIMITS.descriptionBytes, {
  message: `description must be at most ${LIMITS.descriptionBytes} bytes`,
});
export const metadataSchema = z.string().refine((v) => utf8Bytes(v) <= LIMITS.metadataBytes, {
  message: `metadata must be at most ${LIMITS.metadataBytes} bytes`,
});
/** A zod issue for a rule of the hosted service, carrying its error code (see validate.ts). */
export function ruleIssue(
  ctx: z.core.$RefinementCtx,
  violation: RuleViolation | undefined,
  path: PropertyKey[] = [],
): void {
  if (violation === undefined) return;
  ctx.addIssue({
    code: 'custom',
    path,
    message: violation.message,
    params: { code: violation.code },
  });
}

export const hostportsSchema = z
  .array(z.string().superRefine((v, ctx) => ruleIssue(ctx, checkHostport(v))))
  .refine((list) => new Set(list.map((h) => h.toLowerCase())).size === list.length, {
    message: 'hostports must be unique',
  });

// ---- modules -------------------------------------------------------------------------------
