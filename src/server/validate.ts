/**
 * Request-body validation: runs a write-shape schema and maps zod's issues to the API's error
 * codes (api-notes' table). Unknown fields (ERR_SVC_214) win over wrong ID prefixes
 * (ERR_SVC_227), which win over every other invalid value or type (ERR_SVC_215); the message
 * lists every issue with its field path, so a client sees all problems at once.
 */
import type { z } from 'zod';
import { ERROR_CODE } from '../hosted/edge-api.js';
import { ENDPOINT_ERROR_CODE } from './endpoints/codes.js';
import { type ApiErrorCode, RequestError } from './errors.js';

/**
 * Most specific first: unknown fields, wrong ID prefixes, then the rules of the hosted service
 * (each with its own code), then any other invalid value.
 */
const PRIORITY: readonly ApiErrorCode[] = [
  ERROR_CODE.unknownField,
  ERROR_CODE.wrongIdPrefix,
  ERROR_CODE.hostportForm,
  ERROR_CODE.portRange,
  ERROR_CODE.domainPort,
  ERROR_CODE.cookiePrefix,
  ERROR_CODE.circuitBreakerTrippedDuration,
  ERROR_CODE.circuitBreakerRollingWindow,
  ERROR_CODE.circuitBreakerBuckets,
  ENDPOINT_ERROR_CODE.descriptionTooLong,
  ENDPOINT_ERROR_CODE.metadataTooLong,
  ERROR_CODE.invalidValue,
];
const MAX_LISTED = 10;

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw issuesToError(result.error.issues);
}

export function issuesToError(issues: readonly z.core.$ZodIssue[]): RequestError {
  const ranked = issues
    .map((issue) => ({ rank: PRIORITY.indexOf(issueCode(issue)), issue }))
    .sort((x, y) => x.rank - y.rank);
  const best = ranked[0]?.rank ?? PRIORITY.length - 1;
  const messages = ranked.map((r) => describe(r.issue));
  const listed = messages.slice(0, MAX_LISTED);
  if (messages.length > MAX_LISTED) listed.push(`and ${messages.length - MAX_LISTED} more`);
  return new RequestError(400, PRIORITY[best], listed.join('; '));
}

function issueCode(issue: z.core.$ZodIssue): ApiErrorCode {
  if (issue.code === 'unrecognized_keys') return ERROR_CODE.unknownField;
  if (issue.code === 'custom') {
    const code = (issue.params as { code?: unknown } | undefined)?.code;
    if (PRIORITY.includes(code as ApiErrorCode)) return code as ApiErrorCode;
  }
  return ERROR_CODE.invalidValue;
}

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`));
  const where = path.join('').replace(/^\./, '');
  let message = issue.message;
  if (issue.code === 'invalid_type') {
    const missing = /received undefined$/.test(message);
    message = missing ? 'is required' : `must be ${article(issue.expected)}`;
  }
  return where === '' ? `body: ${message}` : `${where}: ${message}`;
}

function article(expected: string): string {
  if (expected === 'object') return 'a JSON object';
  if (expected === 'array') return 'a JSON array';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
