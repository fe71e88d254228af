/**
 * CEL rule expressions from a small grammar: the names the specification lists (request path,
 * host, headers, client IP) with string functions, list macros and `in`, combined with `!`,
 * `&&` and `||`. String literals are escaped as the specification asks (`\` and `'`), and the
 * literal pools hold values that need it.
 */
import fc from 'fast-check';

/** A CEL single-quoted string literal. */
export function celString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const path = fc.constantFrom('/', '/api', '/login', "/it's", '/a\\b', '/static/');
const hostName = fc.constantFrom('app.example.com', 'www.example.com');
const headerName = fc.constantFrom('x-team', 'authorization', 'x-forwarded-for');
const word = fc.constantFrom('web', 'ops', "o'brien", 'bearer');
const ip = fc.constantFrom('10.0.0.1', '192.168.1.20', '2001:db8::1');

/** Available in every phase: the connection. */
const connAtom = fc.oneof(
  ip.map((a) => `conn.client_ip == ${celString(a)}`),
  fc.constant("conn.client_ip.startsWith('10.')"),
  fc.tuple(ip, ip).map(([a, b]) => `conn.client_ip in [${celString(a)}, ${celString(b)}]`),
);

/** Available in the HTTP phases: the request. */
const httpAtom = fc.oneof(
  connAtom,
  path.map((p) => `req.url.path == ${celString(p)}`),
  path.map((p) => `req.url.path.startsWith(${celString(p)})`),
  fc.constantFrom('.js', '.css').map((e) => `req.url.path.endsWith(${celString(e)})`),
  fc.constant("req.url.path.matches('^/v[0-9]+/')"),
  hostName.map((h) => `req.host == ${celString(h)}`),
  headerName.map((h) => `hasReqHeader(${celString(h)})`),
  fc
    .tuple(headerName, word)
    .map(([h, w]) => `getReqHeader(${celString(h)}).exists(v, v.contains(${celString(w)}))`),
  headerName.map((h) => `getReqHeader(${celString(h)}).all(v, v != '')`),
  fc.tuple(headerName, word).map(([h, w]) => `${celString(w)} in getReqHeader(${celString(h)})`),
);

function combined(atom: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: atom, weight: 3 },
    atom.map((a) => `!(${a})`),
    fc.tuple(atom, atom).map(([a, b]) => `${a} && ${b}`),
    fc.tuple(atom, atom, atom).map(([a, b, c]) => `(${a} || ${b}) && !(${c})`),
  );
}

/** One CEL expression valid in `http` (request/response) or `tcp` (connect) phases. */
export function celExpression(kind: 'http' | 'tcp'): fc.Arbitrary<string> {
  return combined(kind === 'http' ? httpAtom : connAtom);
}
