/**
 * CEL text for the migration: string literals, route guards and the user-agent and allow-list
 * conditions. Pure: it only writes expressions; the tests evaluate them with a real CEL engine.
 */

/** A single-quoted CEL string literal (`\` and `'` escaped, control characters as escapes). */
export function celString(value: string): string {
  let out = "'";
  for (const ch of value) {
    if (ch === '\\' || ch === "'") out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ' || ch === '\u007f')
      out += `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

export interface RouteSelector {
  readonly match_type: 'exact_path' | 'path_prefix';
  readonly match: string;
}

/**
 * Routes in the order an edge chose them: exact paths before prefixes, longer prefixes first,
 * then by text. The first route in this order that matches a request is the edge's choice.
 */
export function bySpecificity<T extends RouteSelector>(routes: readonly T[]): T[] {
  const rank = (r: RouteSelector) => (r.match_type === 'exact_path' ? 0 : 1);
  return [...routes].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      b.match.length - a.match.length ||
      (a.match < b.match ? -1 : a.match > b.match ? 1 : 0),
  );
}

/** The condition under which a request would hit this route, ignoring the other routes. */
export function matchExpression(route: RouteSelector): string {
  const literal = celString(route.match);
  return route.match_type === 'exact_path'
    ? `req.url.path == ${literal}`
    : `req.url.path.startsWith(${literal})`;
}

/** Whether some path matches both routes (the order decides which one an edge chose). */
function overlap(earlier: RouteSelector, route: RouteSelector): boolean {
  if (route.match_type === 'exact_path') {
    return earlier.match_type === 'exact_path'
      ? earlier.match === route.match
      : route.match.startsWith(earlier.match);
  }
  return (
    earlier.match.startsWith(route.match) ||
    (earlier.match_type === 'path_prefix' && route.match.startsWith(earlier.match))
  );
}

/**
 * One guard per route (in `bySpecificity` order): the route matches and no earlier route that
 * could match the same path does, so exactly one guard holds for any request that some route
 * matches.
 */
export function routeGuards(ordered: readonly RouteSelector[]): string[] {
  return ordered.map((route, i) =>
    [
      matchExpression(route),
      ...ordered
        .slice(0, i)
        .filter((earlier) => overlap(earlier, route))
        .map((r) => `!(${matchExpression(r)})`),
    ].join(' && '),
  );
}

/** `guards` joined so that any one of them holds. */
export function anyOf(guards: readonly string[]): string {
  return guards.length === 1 ? guards[0]! : guards.map((g) => `(${g})`).join(' || ');
}

const UA = "getReqHeader('user-agent')";

function anyMatch(patterns: readonly string[]): string {
  if (patterns.length === 0) return 'false';
  return `${UA}.exists(ua, ${patterns.map((p) => `ua.matches(${celString(p)})`).join(' || ')})`;
}

/**
 * When a user-agent filter refused a request. An edge let a request through when some `allow`
 * pattern matched or no `deny` pattern matched; a request without the header was refused unless
 * an `allow` pattern matches the empty string (`emptyAllowed`, decided when translating).
 */
export function userAgentDenied(
  allow: readonly string[],
  deny: readonly string[],
  emptyAllowed: boolean,
): string {
  const refusedWithHeader =
    deny.length === 0
      ? 'false'
      : allow.length === 0
        ? anyMatch(deny)
        : `${anyMatch(deny)} && !(${anyMatch(allow)})`;
  return `hasReqHeader('user-agent') ? ${refusedWithHeader} : ${emptyAllowed ? 'false' : 'true'}`;
}

/** The identity's email after an `oauth` action. */
export const OAUTH_EMAIL = 'actions.svc.oauth.identity.email';

/**
 * When an OAuth allow list refuses the user: the email is in neither list (an edge allowed a user
 * whose address is listed OR whose domain is listed).
 */
export function emailRefused(addresses: readonly string[], domains: readonly string[]): string {
  const allowed: string[] = [];
  if (addresses.length > 0) {
    allowed.push(`${OAUTH_EMAIL} in [${addresses.map(celString).join(', ')}]`);
  }
  for (const domain of domains) allowed.push(`${OAUTH_EMAIL}.endsWith(${celString(`@${domain}`)})`);
  return `!(${allowed.join(' || ')})`;
}
