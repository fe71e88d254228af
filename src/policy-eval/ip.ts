/**
 * IP addresses and CIDR ranges as numbers, for the evaluator's `restrict-ips` and the CEL
 * functions `inCidrRange` / `inCidrRanges`, and for the probes that test each range's edges.
 * IPv4 and IPv6 (with `::` and an embedded dotted quad); an IPv4-mapped IPv6 address is not
 * folded into IPv4 (the service's documentation is silent on it). Pure: no `node:net`.
 */

export interface Ip {
  readonly version: 4 | 6;
  readonly value: bigint;
}

export interface Cidr {
  readonly version: 4 | 6;
  readonly first: bigint;
  readonly last: bigint;
  readonly bits: number;
}

function v4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let out = 0n;
  for (let i = 0; i < 4; i++) {
    const p = parts[i] as string;
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p.startsWith('0'))) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out = (out << 8n) | BigInt(n);
  }
  return out;
}

function v6(text: string): bigint | undefined {
  let head = text;
  let tail4: bigint | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail4 = v4(text.slice(lastColon + 1));
    if (tail4 === undefined) return undefined;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(halves[0] ?? '');
  const right = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  let out = 0n;
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    out = (out << 16n) | BigInt(Number.parseInt(g, 16));
  }
  if (tail4 !== undefined) out = (out & ~0xffffffffn) | tail4;
  return out;
}

/**
 * Addresses and ranges already read, by text (bounded): a preview reads the same few, for every
 * probe that goes through a `restrict-ips` or names them. The values are never changed.
 */
const ips = new Map<string, Ip | undefined>();
const cidrs = new Map<string, Cidr | undefined>();
const KEPT = 4_096;

function kept<T>(memo: Map<string, T>, text: string, read: (text: string) => T): T {
  const known = memo.get(text);
  if (known !== undefined || memo.has(text)) return known as T;
  const value = read(text);
  if (memo.size >= KEPT) memo.delete(memo.keys().next().value as string);
  memo.set(text, value);
  return value;
}

export function parseIp(text: string): Ip | undefined {
  return kept(ips, text, readIp);
}

function readIp(text: string): Ip | undefined {
  if (text.includes(':')) {
    const value = v6(text);
    return value === undefined ? undefined : { version: 6, value };
  }
  const value = v4(text);
  return value === undefined ? undefined : { version: 4, value };
}

export function parseCidr(text: string): Cidr | undefined {
  return kept(cidrs, text, readCidr);
}

function readCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (ip === undefined) return undefined;
  const width = ip.version === 4 ? 32 : 128;
  const bitsText = slash < 0 ? String(width) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > width) return undefined;
  const hostBits = BigInt(width - bits);
  const first = (ip.value >> hostBits) << hostBits;
  return { version: ip.version, first, last: first + (1n << hostBits) - 1n, bits };
}

export function inCidr(ip: Ip, cidr: Cidr): boolean {
  return ip.version === cidr.version && ip.value >= cidr.first && ip.value <= cidr.last;
}

/** The address as text (IPv6 uncompressed but without leading zeros: valid and unambiguous). */
export function formatIp(ip: Ip): string {
  if (ip.version === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.');
  }
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((ip.value >> s) & 0xffffn).toString(16));
  return groups.join(':');
}

/**
 * The addresses at a range's edges: its first and last, and the ones just outside it (when they
 * exist), so a change of one bit of a prefix length shows.
 */
export function cidrEdges(cidr: Cidr): readonly string[] {
  let edges = edgesOf.get(cidr);
  if (edges === undefined) {
    const max = cidr.version === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
    const values = [cidr.first, cidr.last];
    if (cidr.first > 0n) values.push(cidr.first - 1n);
    if (cidr.last < max) values.push(cidr.last + 1n);
    edges = values.map((value) => formatIp({ version: cidr.version, value }));
    edgesOf.set(cidr, edges);
  }
  return edges;
}

/** The edges of each range read (ranges are kept by text, and never changed). */
const edgesOf = new WeakMap<Cidr, readonly string[]>();

/** Why a CIDR is not one as the IP policy rules take it (the API's 1413, 1406, 1409). */
export type CidrProblem =
  | { readonly problem: 'noMask'; readonly message: string }
  | { readonly problem: 'invalid'; readonly message: string }
  | { readonly problem: 'notLowest'; readonly message: string; readonly lowest: string };

/**
 * A rule's CIDR checked as the service checks it: a mask is required, and the range is written
 * with its lowest address (the message names it: "did you mean `10.0.0.0/8`?"). The server's
 * rule handlers and the manifest's `IPPolicy` rules share it.
 */
export function ruleCidrProblem(text: string): CidrProblem | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) {
    const ip = parseIp(text);
    if (ip === undefined) return { problem: 'invalid', message: `cidr "${text}" is not a CIDR` };
    return {
      problem: 'noMask',
      message: `cidr "${text}" has no mask: write ${text}/${ip.version === 4 ? 32 : 128} for this one address`,
    };
  }
  const cidr = parseCidr(text);
  const ip = parseIp(text.slice(0, slash));
  if (cidr === undefined || ip === undefined) {
    return { problem: 'invalid', message: `cidr "${text}" is not a valid IPv4 or IPv6 CIDR` };
  }
  if (ip.value !== cidr.first) {
    const lowest = canonicalCidr(cidr);
    return {
      problem: 'notLowest',
      lowest,
      message: `cidr "${text}" is not written with its range's lowest address: did you mean \`${lowest}\`?`,
    };
  }
  return undefined;
}

/** A range as one text whatever way it was written (lowest address, IPv6 lower-case): a key. */
export function canonicalCidr(cidr: Cidr): string {
  return `${formatIp({ version: cidr.version, value: cidr.first })}/${cidr.bits}`;
}
