/**
 * The shape phase's messages: zod issues turned into located, human diagnostics ("expected a
 * list, got a string", "did you mean ...", hints for modules written at the wrong level and for
 * YAML values that need quotes).
 */
import type { z } from 'zod';
import { ROUTE_MODULES } from '../hosted/modules/index.js';
import { isServiceUserKind } from './modules.js';
import type { FieldPath, Segment } from './paths.js';
import { objectKeys, schemaAt } from './refs.js';
import { didYouMean } from './suggest.js';
import type { Anchor, ParsedDocument } from './yaml.js';

/** Messages for issues whose schema gave none: short, in the user's terms (YAML, not JS). */
export function errorMap(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${expectedName(issue.expected)}, got ${describeValue(issue.input)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return undefined;
  }
}

function expectedName(expected: string): string {
  switch (expected) {
    case 'object':
    case 'record':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'boolean':
      return 'true or false';
    case 'int':
      return 'a whole number';
    case 'string':
    case 'number':
      return `a ${expected}`;
    default:
      return expected;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  switch (typeof value) {
    case 'object':
      return 'a mapping';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return typeof value;
  }
}

interface Described {
  readonly path: FieldPath;
  readonly message: string;
  readonly at: FieldPath;
  readonly anchor?: Anchor;
}

const ROUTE_MODULE_NAMES: ReadonlySet<string> = new Set(ROUTE_MODULES);

/** Known-but-misplaced fields: a precise explanation beats "did you mean". */
function misplacedHint(kind: string, parent: FieldPath, key: string): string | undefined {
  const where = parent.filter((s) => typeof s === 'string').join('.');
  if (kind === 'HTTPSEdge' && where === 'tls_termination' && key === 'terminate_at') {
    return 'terminate_at is not allowed on HTTPS edges: they always terminate TLS at the edge';
  }
  if (where.startsWith('routes.oauth.provider.') && (key === 'teams' || key === 'organizations')) {
    return `${key} is accepted only by the github provider`;
  }
  if (kind === 'HTTPSEdge' && where === '' && ROUTE_MODULE_NAMES.has(key)) {
    return `${key} belongs on a route: an HTTPS edge itself carries only mutual_tls and tls_termination`;
  }
  if (kind === 'TLSEdge' && where === '' && (key === 'routes' || ROUTE_MODULE_NAMES.has(key))) {
    return key === 'routes'
      ? 'TLS edges have no routes (use an HTTPSEdge)'
      : `${key} is a route module of HTTPS edges; a TLS edge carries backend, ip_restriction, mutual_tls, tls_termination and traffic_policy`;
  }
  if (isServiceUserKind(kind) && where === '' && (key === 'metadata' || key === 'description')) {
    return `service users carry no ${key}`;
  }
  // A Map, not an object literal: `key` is user input (`constructor` must not find anything).
  const readShape = new Map([
    ['ip_policies', 'ip_policy_ids'],
    ['certificate_authorities', 'certificate_authority_ids'],
  ]);
  const write = readShape.get(key);
  if (write !== undefined)
    return `unknown field "${key}"; manifests use the API's write shapes: "${write}"`;
  if (where.endsWith('backend') && key === 'backend') {
    return 'unknown field "backend"; manifests use the API\'s write shapes: "backend_id"';
  }
  return undefined;
}

export function describeIssue(
  kind: string,
  schema: z.ZodType,
  issue: z.core.$ZodIssue,
  input: unknown,
  doc: ParsedDocument,
): Described[] {
  const path = issue.path.filter((s): s is Segment => typeof s !== 'symbol');
  switch (issue.code) {
    case 'unrecognized_keys': {
      const accepted = objectKeys(schemaAt(schema, path, input));
      return issue.keys.map((key) => ({
        path,
        at: [...path, key],
        anchor: 'key' as const,
        message:
          misplacedHint(kind, path, key) ?? `unknown field "${key}"${didYouMean(key, accepted)}`,
      }));
    }
    case 'invalid_key': {
      const message = issue.issues[0]?.message ?? issue.message;
      return [{ path, at: path, anchor: 'key', message: `invalid key: ${message}` }];
    }
    case 'invalid_type': {
      if (valueAt(input, path) === undefined) {
        return [{ path, at: path, message: 'required field is missing' }];
      }
      return [
        { path, at: path, message: issue.message + quoteHint(issue.expected, path, input, doc) },
      ];
    }
    case 'invalid_value': {
      const stringEnum = issue.values.every((v) => typeof v === 'string');
      return [
        {
          path,
          at: path,
          message: issue.message + (stringEnum ? quoteHint('string', path, input, doc) : ''),
        },
      ];
    }
    default:
      return [{ path, at: path, message: issue.message }];
  }
}

/** YAML reads `1.3` and `yes` as a number or boolean; when a string was meant, say how. */
function quoteHint(expected: string, path: FieldPath, input: unknown, doc: ParsedDocument): string {
  if (expected !== 'string') return '';
  const value = valueAt(input, path);
  if (typeof value !== 'number' && typeof value !== 'boolean') return '';
  const source = doc.scalarSource(path);
  return source === undefined ? '' : `; quote it to make it a string: "${source}"`;
}

export function valueAt(input: unknown, path: FieldPath): unknown {
  let v = input;
  for (const segment of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    if (!Object.hasOwn(v, segment)) return undefined;
    v = (v as Record<string | number, unknown>)[segment];
  }
  return v;
}

// ---- model assembly ---------------------------------------------------------------------------

/** Paths that are sensitive by definition (secrets), relative to a route. */
