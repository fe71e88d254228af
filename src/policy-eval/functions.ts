/**
 * What the service's CEL functions do when a policy runs: the implementations, by the
 * signatures `src/hosted/cel.ts` declares, of the functions a guard or an interpolation calls
 * (`getReqHeader`, `hasReqHeader`, `getQueryParam`, `hasQueryParam`, `getReqCookie`,
 * `hasReqCookie`, `inCidrRange`, `inCidrRanges`, `isPrivateIp`, `secrets.get`, the string,
 * encoding and list helpers). A function the model cannot run (a hash, `rand`, the response's
 * headers) stays unimplemented: evaluating it fails naming it. The request a function reads is
 * the one of the evaluation that runs: the environment is built once (about 100 ms) and
 * evaluation is synchronous, so `enterRequest` sets it for exactly one run. Pure.
 */
import { RE2JS } from 're2js';
import { type CelImplementations, CelStringLike, celObject } from '../hosted/cel-values.js';
import { inCidr, parseCidr, parseIp } from './ip.js';

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
 * (a thrown error would read as the engine's): the expression's outcome is then this error.
 */
let notGiven: string | undefined;

/**
 * Sets `s` as the request the functions read, until `leaveRequest` is given what this returned
 * (in a `finally`): an evaluation runs many expressions, with no closure made for each.
 */
export function enterRequest(s: FunctionScope): FunctionScope {
  const before = scope;
  scope = s;
  return before;
}

export function leaveRequest(before: FunctionScope): void {
  scope = before;
}

/** The fact missing in the last evaluation, if any, forgotten as it is read. */
export function takeNotGiven(): string | undefined {
  const missing = notGiven;
  notGiven = undefined;
  return missing;
}

function cookies(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of scope.headers.cookie ?? []) {
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

const utf8 = (text: string) => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unbase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** JSON (given by a case, or decoded) as a CEL value: whole numbers become CEL ints. */
export function celInput(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(celInput);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celInput(v)]));
  }
  return value;
}

/** A CEL value as JSON text (ints as numbers, a value that is also a string as that string). */
export function celJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return Number(v);
    if (v instanceof CelStringLike) return v.text;
    if (v instanceof Map) return Object.fromEntries(v);
    return v;
  });
}

function queryDecode(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) out[k] = [...(out[k] ?? []), v];
  return out;
}

function queryEncode(map: unknown): string {
  const params = new URLSearchParams();
  const entries = map instanceof Map ? [...map] : Object.entries(map as object);
  for (const [k, v] of entries) {
    for (const item of Array.isArray(v) ? v : [v]) params.append(String(k), String(item));
  }
  return params.toString();
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const isUrl = (text: string) => URL.canParse(text);

function replace(s: string, from: string, to: string, n = -1n): string {
  if (n < 0n) return s.split(from).join(to);
  let out = s;
  let at = 0;
  for (let i = 0n; i < n; i++) {
    const found = out.indexOf(from, at);
    if (found < 0) break;
    out = out.slice(0, found) + to + out.slice(found + from.length);
    at = found + to.length;
  }
  return out;
}

function flatten(list: readonly unknown[], depth: number): unknown[] {
  return list.flatMap((item) =>
    Array.isArray(item) && depth > 0 ? flatten(item, depth - 1) : [item],
  );
}

const order = (a: unknown, b: unknown) =>
  (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;

/** The implementations, by signature (the signatures of `CEL_FUNCTIONS`). */
export const CEL_RUNTIME = {
  'getReqHeader(string): list<string>': (name: string) => [
    ...(scope.headers[name.toLowerCase()] ?? []),
  ],
  'hasReqHeader(string): bool': (name: string) => Object.hasOwn(scope.headers, name.toLowerCase()),
  'getQueryParam(string): list<string>': (name: string) => [...(scope.query[name] ?? [])],
  'hasQueryParam(string): bool': (name: string) => Object.hasOwn(scope.query, name),
  'hasReqCookie(string): bool': (name: string) => cookies().has(name),
  'getReqCookie(string): svc.ReqCookie': (name: string) => {
    const value = cookies().get(name);
    return value === undefined ? null : celObject('svc.ReqCookie', { name, value });
  },
  'inCidrRange(string, string): bool': cidrHolds,
  'inCidrRanges(string, list<string>): bool': (ip: string, list: readonly unknown[]) =>
    list.some((cidr) => cidrHolds(ip, String(cidr))),
  'string.isPrivateIp(): bool': (ip: string) => PRIVATE.some((c) => cidrHolds(ip, c)),
  'secrets.get(string, string): string': (vault: string, name: string) => {
    const value = scope.secrets[`${vault}/${name}`];
    if (value === undefined) {
      notGiven ??= `secrets.get('${vault}', '${name}'): the case gives no such secret`;
      return '';
    }
    return value;
  },
  'matches(string, string): bool': (text: string, re: string) =>
    RE2JS.compile(re).matcher(text).find(),
  'base64.decode(string): bytes': unbase64,
  'base64.encode(bytes): string': base64,
  'base64.encode(string): string': (text: string) => base64(utf8(text)),
  'basic_auth.encode(string, string): string': (user: string, password: string) =>
    base64(utf8(`${user}:${password}`)),
  'json.decode(string): dyn': (text: string) => celInput(JSON.parse(text)),
  'json.encode(dyn): string': celJson,
  'lists.range(int): list<int>': (n: bigint) =>
    Array.from({ length: Math.max(0, Number(n)) }, (_, i) => BigInt(i)),
  'queryString.decode(string): map<string, list<string>>': queryDecode,
  'queryString.encode(map<string, dyn>): string': queryEncode,
  'strings.quote(string): string': (text: string) => JSON.stringify(text),
  'url.escape(string): string': encodeURIComponent,
  'url.unescape(string): string': decodeURIComponent,
  'list<A>.encodeJson(): string': celJson,
  'list<A>.slice(int, int): list<A>': (list: readonly unknown[], from: bigint, to: bigint) =>
    list.slice(Number(from), Number(to)),
  'list<A>.flatten(): list<dyn>': (list: readonly unknown[]) => flatten(list, 1),
  'list<A>.flatten(int): list<dyn>': (list: readonly unknown[], depth: bigint) =>
    flatten(list, Number(depth)),
  'list<A>.sort(): list<A>': (list: readonly unknown[]) => [...list].sort(order),
  'list<A>.distinct(): list<A>': (list: readonly unknown[]) => [...new Set(list)],
  'map.encodeJson(): string': celJson,
  'map.encodeQueryString(): string': queryEncode,
  'string.isJson(): bool': isJson,
  'string.isQueryString(): bool': (text: string) => !/[\s#]/.test(text),
  'string.isURL(): bool': isUrl,
  'string.decodeBase64(): string': (text: string) => new TextDecoder().decode(unbase64(text)),
  'string.encodeBase64(): string': (text: string) => base64(utf8(text)),
  'string.escapeUrl(): string': encodeURIComponent,
  'string.unescapeUrl(): string': decodeURIComponent,
  'string.lower(): string': (text: string) => text.toLowerCase(),
  'string.upper(): string': (text: string) => text.toUpperCase(),
  'string.reverse(): string': (text: string) => [...text].reverse().join(''),
  'string.charAt(int): string': (text: string, at: bigint) => text.charAt(Number(at)),
  'string.replace(string, string): string': (s: string, from: string, to: string) =>
    replace(s, from, to),
  'string.replace(string, string, int): string': replace,
  'string.decodeJson(): dyn': (text: string) => celInput(JSON.parse(text)),
  'string.decodeQueryString(): map<string, list<string>>': queryDecode,
} satisfies CelImplementations;

/**
 * The standard string functions, for the values that are also strings (`req.url`,
 * `conn.client_ip`): the environment gives those types every string overload and runs it here on
 * the string form; on plain strings the engine's own run.
 */
export const CEL_STRING_BUILTINS = {
  'string(string): string': (s: string) => s,
  'size(string): int': (s: string) => BigInt([...s].length),
  'string.size(): int': (s: string) => BigInt([...s].length),
  'string.startsWith(string): bool': (s: string, p: string) => s.startsWith(p),
  'string.endsWith(string): bool': (s: string, p: string) => s.endsWith(p),
  'string.contains(string): bool': (s: string, p: string) => s.includes(p),
  'string.matches(string): bool': (s: string, re: string) => RE2JS.compile(re).matcher(s).find(),
  'string.lowerAscii(): string': (s: string) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase()),
  'string.upperAscii(): string': (s: string) => s.replace(/[a-z]+/g, (c) => c.toUpperCase()),
  'string.trim(): string': (s: string) => s.trim(),
  'string.indexOf(string): int': (s: string, p: string) => BigInt(s.indexOf(p)),
  'string.lastIndexOf(string): int': (s: string, p: string) => BigInt(s.lastIndexOf(p)),
  'string.substring(int): string': (s: string, from: bigint) => s.slice(Number(from)),
  'string.substring(int, int): string': (s: string, from: bigint, to: bigint) =>
    s.slice(Number(from), Number(to)),
  'string.split(string): list<string>': (s: string, sep: string) => s.split(sep),
} satisfies CelImplementations;
