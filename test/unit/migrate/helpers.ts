/**
 * Edge inputs for the migration's tests, from YAML text: the document as written (references
 * kept) beside the validated manifest (references resolved to a placeholder), as the command
 * builds them.
 */
import { CelScalar, celEnv, celFunc, listType, parse, plan } from '@bufbuild/cel';
import type { FieldPath } from '../../../src/manifest/paths.js';
import { HttpsEdgeSchema, TlsEdgeSchema } from '../../../src/manifest/schema.js';
import { parseYaml } from '../../../src/manifest/yaml.js';
import { documentSource } from '../../../src/migrate/source.js';
import type { EdgeInput, Rule } from '../../../src/migrate/translate.js';

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

const TERMINATING = new Set(['deny', 'custom-response', 'forward-internal', 'close-connection']);

/** The request whose headers `getReqHeader` answers from (the engine's functions are made once). */
let current: Request | undefined;
const headersOf = (r: Request | undefined): Record<string, string[]> =>
  r?.userAgent === undefined ? {} : { 'user-agent': [r.userAgent] };
const env = celEnv({
  funcs: [
    celFunc(
      'getReqHeader',
      [CelScalar.STRING],
      listType(CelScalar.STRING),
      (name: string) => headersOf(current)[name.toLowerCase()] ?? [],
    ),
    celFunc(
      'hasReqHeader',
      [CelScalar.STRING],
      CelScalar.BOOL,
      (name: string) => name.toLowerCase() in headersOf(current),
    ),
  ],
});
const planned = new Map<string, ReturnType<typeof plan>>();

function holds(expression: string, request: Request): boolean {
  let program = planned.get(expression);
  if (!program) {
    program = plan(env, parse(expression));
    planned.set(expression, program);
  }
  current = request;
  const result = program({
    req: new Map<string, unknown>([
      ['url', new Map([['path', request.path]])],
      ['host', request.host],
    ]),
    actions: new Map([
      ['svc', new Map([['oauth', new Map([['identity', new Map([['email', request.email]])]])]])],
    ]),
  } as never);
  if (typeof result !== 'boolean') throw new Error(`${expression} gave ${String(result)}`);
  return result;
}

/** Runs a phase the way the service does: every rule whose expressions hold, actions in order. */
export function evaluate(rules: readonly Rule[], request: Request): Outcome {
  const applied: string[] = [];
  for (const rule of rules) {
    if (!(rule.expressions ?? []).every((e) => holds(e, request))) continue;
    for (const action of rule.actions) {
      if (!TERMINATING.has(action.type)) {
        applied.push(action.type);
        continue;
      }
      const status = action.config?.status_code;
      if (action.type === 'forward-internal')
        return { end: `forward ${String(action.config?.url)}`, applied };
      if (action.type === 'deny') return { end: `deny ${String(status ?? 403)}`, applied };
      return { end: `respond ${String(status ?? 200)}`, applied };
    }
  }
  return { end: 'fell through', applied };
}
