/**
 * What the account resources' handlers share (reserved domains, certificate authorities,
 * service users; account-resources.md's common part): the description and metadata limits,
 * the path ID lookup (400 when malformed, 404 when unknown here, another account's included)
 * and the refusal of a PATCH with no field. The IDs of these kinds are checked whole (prefix
 * and 27 base62 characters), as the specification asks of every account resource.
 */
import { z } from 'zod';
import { ERROR_CODE, utf8Bytes } from '../hosted/edge-api.js';
import { ACCOUNT_RESOURCE_LIMITS as LIMITS } from './domain-codes.js';
import { invalidValue, RequestError } from './errors.js';
import type { Call } from './handler-common.js';
import { idBody } from './ids.js';

const bytes = (field: string, max: number) =>
  z
    .string()
    .refine((v) => utf8Bytes(v) <= max, { message: `${field} must be at most ${max} bytes` });

/** description and metadata, with the limits every account resource shares. */
export const describedFields = {
  description: bytes('description', LIMITS.descriptionBytes).optional(),
  metadata: bytes('metadata', LIMITS.metadataBytes).optional(),
};

// ---- lookups

/** A path ID of the kind: 400 when malformed, 404 when unknown here (another account's too). */
export function lookup<T>(call: Call, what: string, get: (id: string) => T | undefined): T {
  const id = call.ids[0] as string;
  if (idBody(id) === undefined || id.indexOf('_') !== id.lastIndexOf('_')) {
    throw new RequestError(
      400,
      ERROR_CODE.wrongIdPrefix,
      `${JSON.stringify(id.slice(0, 100))} is not a well-formed ${what} ID`,
    );
  }
  const rec = get(id);
  if (rec === undefined)
    throw new RequestError(404, ERROR_CODE.notFound, `${what} ${id} not found`);
  return rec;
}

export function emptyUpdate(body: object): void {
  if (Object.keys(body).length === 0) {
    throw invalidValue('the update has no field: send at least one to change');
  }
}
