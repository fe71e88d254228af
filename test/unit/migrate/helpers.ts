/**
 * Edge inputs for the migration's tests, from YAML text: the document as written (references
 * kept) beside the validated manifest (references resolved to a placeholder), as the command
 * builds them.
 */
import type { FieldPath } from '../../../src/manifest/paths.js';
import { HttpsEdgeSchema, TlsEdgeSchema } from '../../../src/manifest/schema.js';
import { parseYaml } from '../../../src/manifest/yaml.js';
import { documentSource } from '../../../src/migrate/source.js';
import type { EdgeInput, Rule } from '../../../src/migrate/translate.js';
import { describeOutcome } from '../../../src/policy-eval/cases.js';
import { evaluatePolicy } from '../../../src/policy-eval/evaluate.js';

export const RESOLVED = 'resolved-from-reference';

/** References resolved as the loader would: `{ env: NAME }` from `env`, anything else to RESOLVED. */
function resolveRefs(value: unknown, env: Readonly<Record<string, string>>): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, env));
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && (keys[0] === 'env' || keys[0] === 'file')) {
    const name = (value as { env?: unknown }).env;
    return typeof name === 'string' && Object.hasOwn(env, name) ? env[name] : RESOLVED;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveRefs(v, env)]));
}

export function edgeFromYaml(
  text: string,
  file = 'edges.yaml',
  env: Readonly<Record<string, string>> = {},
): EdgeInput {
  const { documents, problems } = parseYaml(text, { maxAliasCount: 100 });
  if (problems.length > 0 || !documents[0])
    throw new Error(`bad test YAML: ${JSON.stringify(problems)}`);
  const doc = documents[0];
  const raw = doc.value as Record<string, unknown>;
  const source = documentSource(file, raw, (path: FieldPath) => doc.locate(path));
  const located = {
    source: { file, line: doc.start.line, column: doc.start.column },
    sensitive: [],
  };
  if (raw.kind === 'TLSEdge') {
    return {
      kind: 'TLSEdge',
      edge: { ...TlsEdgeSchema.parse(resolveRefs(raw, env)), ...located },
      source,
    };
  }
  const edge = HttpsEdgeSchema.parse(resolveRefs(raw, env));
  return {
    kind: 'HTTPSEdge',
    edge: { ...edge, routes: edge.routes.map((r) => ({ ...r, ...located })), ...located },
    source,
  };
}

/** A request as the policy sees it (after an `oauth` action, `email` is the identity's). */
export interface Request {
  readonly path: string;
  readonly host: string;
  readonly userAgent: string | undefined;
  readonly email: string;
}

export interface Outcome {
  /** `forward <url>`, `deny <status>`, `respond <status>` or `fell through`. */
  readonly end: string;
  /** Non-terminating action types run before the end, in order. */
  readonly applied: string[];
}

/** The IP policy the edges of the property restrict to: the requests come from inside it. */
export const IP_POLICY = 'ipp_2YvG88zHTBUrwWfAPU0bnv6b8QY';

/**
 * Runs a phase through the evaluator of src/policy-eval, the one the policy tests and the plan's
 * preview use: the edge model is held to the same evaluator users' cases run on. The request
 * comes from inside the edges' IP policy, with a verified webhook, logged in as `email`.
 */
export function evaluate(rules: readonly Rule[], request: Request): Outcome {
  const headers: Record<string, string[]> =
    request.userAgent === undefined ? {} : { 'user-agent': [request.userAgent] };
  const e = evaluatePolicy(
    { on_http_request: rules as unknown as Record<string, unknown>[] },
    `https://${request.host}`,
    { method: 'GET', url: `https://${request.host}${request.path}`, headers },
    {
      identity: { email: request.email },
      webhook_verified: true,
      ip_policies: { [IP_POLICY]: 'allow' },
    },
  );
  const o = e.outcome;
  const end =
    o.kind === 'forward'
      ? `forward ${o.url}`
      : o.kind === 'refuse' && o.by === 'deny'
        ? `deny ${o.status}`
        : o.kind === 'respond'
          ? `respond ${o.status}`
          : o.kind === 'unhandled'
            ? 'fell through'
            : describeOutcome(o);
  return { end, applied: [...e.applied] };
}
