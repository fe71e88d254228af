/**
 * CEL at run time for the evaluator: one environment (@bufbuild/cel) with the service's
 * functions that a policy's guards and interpolations call (`getReqHeader`, `hasReqHeader`,
 * `getQueryParam`, `hasQueryParam`, `getReqCookie`, `hasReqCookie`, `inCidrRange`,
 * `inCidrRanges`, `secrets.get`, `isPrivateIp`, and the string extension), compiled programs
 * kept per expression, and `${expr}` interpolation of config strings. The request a function
 * reads is the one of the evaluation that runs: the functions are bound once (planning is the
 * costly part), and evaluation is synchronous, so `withRequest` sets it for exactly one run.
 * Where a `${...}` ends is the policy syntax's one rule (`interpolations`, src/hosted/cel.ts),
 * which validation checks with. Pure.
 */
import type { celEnv, parse, plan } from '@bufbuild/cel';
import { interpolations } from '../hosted/cel.js';
import { bufCel, bufCelExt } from '../hosted/cel-libraries.js';
import { inCidr, parseCidr, parseIp } from './ip.js';

type Json = Readonly<Record<string, unknown>>;

export type ParsedCel = ReturnType<typeof parse>;

/**
 * Parses kept by text, oldest dropped first past `PARSES_KEPT`: parsing is most of what
 * evaluating costs (about half a millisecond an expression), and the same expressions are parsed
 * by the evaluator and the preview's probes in the same run.
 */
const parses = new Map<string, ParsedCel | { readonly error: string }>();
const PARSES_KEPT = 8_192;

/** `text` parsed as CEL, or the parser's message. */
export function parseCel(text: string): ParsedCel | { readonly error: string } {
  let known = parses.get(text);
  if (known === undefined) {
    try {
      known = bufCel().parse(text);
    } catch (err) {
      known = { error: err instanceof Error ? err.message : String(err) };
    }
    if (parses.size >= PARSES_KEPT) parses.delete(parses.keys().next().value as string);
    parses.set(text, known);
  }
  return known;
}

/**
 * A string value cut into its literal text and its `${expr}` interpolations, in order (the
 * evaluator fills them in), or the offset of an unterminated one.
 */
function splitInterpolations(
  text: string,
): { readonly parts: (string | { readonly expr: string })[] } | { readonly error: string } {
  const found = interpolations(text);
  if ('unterminated' in found) return { error: `unterminated \${ at offset ${found.unterminated}` };
  const parts: (string | { readonly expr: string })[] = [];
  let from = 0;
  for (const { expr, offset } of found.exprs) {
    const at = offset - 2;
    if (at > from) parts.push(text.slice(from, at));
    parts.push({ expr });
    from = offset + expr.length + 1;
  }
  if (from < text.length || parts.length === 0) parts.push(text.slice(from));
  return { parts };
}

/** What the functions read: the request's headers, query and the secrets the case gives. */
export interface FunctionScope {
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly query: Readonly<Record<string, readonly string[]>>;
  readonly secrets: Readonly<Record<string, string>>;
}

const NOTHING: FunctionScope = { headers: {}, query: {}, secrets: {} };
let scope: FunctionScope = NOTHING;
/**
 * A fact a function needed and the case does not give (a secret), noted rather than thrown
 * (the engine's own errors are values): the expression's outcome is then this error.
 */
let notGiven: string | undefined;

function current(): FunctionScope {
  return scope;
}

function cookies(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of current().headers.cookie ?? []) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      const name = part.slice(0, eq).trim();
      if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
    }
  }
  return out;
}

function cidrHolds(ip: string, cidr: string): boolean {
  const a = parseIp(ip);
  const range = parseCidr(cidr);
  return a !== undefined && range !== undefined && inCidr(a, range);
}

const PRIVATE = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '127.0.0.0/8',
  'fc00::/7',
  '::1/128',
];

/** The environment, built at the first evaluation (its library is loaded then: cel-libraries.ts). */
let env: ReturnType<typeof celEnv> | undefined;

function environment(): ReturnType<typeof celEnv> {
  env ??= createEnvironment();
  return env;
}

function createEnvironment(): ReturnType<typeof celEnv> {
  const { CelScalar, celEnv, celFunc, celMethod, listType } = bufCel();
  const { strings } = bufCelExt();
  const STRING = CelScalar.STRING;
  const STRINGS = listType(STRING);
  return celEnv({
    funcs: [
      ...strings,
      celFunc('getReqHeader', [STRING], STRINGS, (name) => [
        ...(current().headers[name.toLowerCase()] ?? []),
      ]),
      celFunc('hasReqHeader', [STRING], CelScalar.BOOL, (name) =>
        Object.hasOwn(current().headers, name.toLowerCase()),
      ),
      celFunc('getQueryParam', [STRING], STRINGS, (name) => [...(current().query[name] ?? [])]),
      celFunc('hasQueryParam', [STRING], CelScalar.BOOL, (name) =>
        Object.hasOwn(current().query, name),
      ),
      celFunc('hasReqCookie', [STRING], CelScalar.BOOL, (name) => cookies().has(name)),
      celFunc('getReqCookie', [STRING], CelScalar.DYN, (name) => {
        const value = cookies().get(name);
        return value === undefined ? null : { name, value };
      }),
      celFunc('inCidrRange', [STRING, STRING], CelScalar.BOOL, cidrHolds),
      celFunc('inCidrRanges', [STRING, STRINGS], CelScalar.BOOL, (ip, list) => {
        for (const cidr of list) if (cidrHolds(ip, String(cidr))) return true;
        return false;
      }),
      celMethod('isPrivateIp', STRING, [], CelScalar.BOOL, function (this: string) {
        return PRIVATE.some((c) => cidrHolds(this, c));
      }),
      celFunc('secrets.get', [STRING, STRING], STRING, (vault, name) => {
        const value = current().secrets[`${vault}/${name}`];
        if (value === undefined) {
          notGiven ??= `secrets.get('${vault}', '${name}'): the case gives no such secret`;
          return '';
        }
        return value;
      }),
    ],
  });
}

type Program = ReturnType<typeof plan>;
const programs = new Map<string, Program | { readonly error: string }>();
const PROGRAMS_KEPT = 8_192;

/** Runs `fn` with `s` as the request the functions read. */
export function withRequest<T>(s: FunctionScope, fn: () => T): T {
  const before = scope;
  scope = s;
  try {
    return fn();
  } finally {
    scope = before;
  }
}

export type CelOutcome = { readonly value: unknown } | { readonly error: string };

/** Evaluates one expression on `vars` (inside `withRequest`). */
export function evalCel(expression: string, vars: Readonly<Record<string, unknown>>): CelOutcome {
  let program = programs.get(expression);
  if (program === undefined) {
    try {
      const parsed = parseCel(expression);
      program =
        'error' in parsed
          ? { error: `not CEL: ${parsed.error}` }
          : bufCel().plan(environment(), parsed);
    } catch (err) {
      program = { error: `not CEL: ${(err as Error).message}` };
    }
    // Bounded like the parses: a long-running process sees policies come and go.
    if (programs.size >= PROGRAMS_KEPT) programs.delete(programs.keys().next().value as string);
    programs.set(expression, program);
  }
  if ('error' in program) return program;
  let result: unknown;
  notGiven = undefined;
  try {
    result = program(vars as never);
  } catch (err) {
    return { error: (err as Error).message };
  }
  const missing = notGiven;
  notGiven = undefined;
  if (missing !== undefined) return { error: missing };
  if (bufCel().isCelError(result)) return { error: result.message };
  return { value: result };
}

/** A CEL value as the service writes it into a string (ints without the bigint's `n`). */
export function celText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

/**
 * A config string with its `${expr}` parts replaced by their values. `exact`: a value that is
 * one interpolation and nothing else keeps its CEL type (`set-vars`).
 */
export function interpolate(
  text: string,
  vars: Readonly<Record<string, unknown>>,
  exact = false,
): CelOutcome {
  const parts = splitInterpolations(text);
  if ('error' in parts) return parts;
  const only = parts.parts.length === 1 ? parts.parts[0] : undefined;
  if (exact && only !== undefined && typeof only !== 'string') return evalCel(only.expr, vars);
  let out = '';
  for (const part of parts.parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const got = evalCel(part.expr, vars);
    if ('error' in got) return { error: `\${${part.expr}}: ${got.error}` };
    out += celText(got.value);
  }
  return { value: out };
}

/**
 * Plain objects (and the objects they hold) as CEL maps, converted once: the engine otherwise
 * converts an object each time an expression reads it (a map built for `req`, another for
 * `req.url`, at each read), the dearest step of evaluating a simple guard. Lists are left to
 * the engine, which wraps one without copying it when it is read.
 */
export function celValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || value.constructor !== Object) return value;
  const map = new Map<string, unknown>();
  for (const key of Object.keys(value)) map.set(key, celValue((value as Json)[key]));
  return bufCel().celMap(map as never);
}

/** JSON given by a case as CEL input: whole numbers become CEL ints. */
export function celInput(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(celInput);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celInput(v)]));
  }
  return value;
}
