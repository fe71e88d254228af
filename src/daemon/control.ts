/**
 * Who may use the daemon's mutating endpoints (`POST /-/suspend`, `/-/resume`, `/-/reconcile`).
 * Suspending hides drift and a reconcile spends API budget, so they are never open to the
 * network: a listener serves them with a bearer token (`--control-token-file`,
 * `EDGESYNC_CONTROL_TOKEN`), or without one only when it is bound to loopback (`127.0.0.1` by
 * default, or the `--admin-listen` listener, which must be). A listener on another address with
 * no token serves them to no one, and the daemon says so at start. Read-only endpoints are not
 * concerned.
 *
 * A browser is a client too: any web page can POST to a loopback port (a form, `fetch` in
 * `no-cors` mode), and a page whose host name its owner rebinds to 127.0.0.1 (DNS rebinding)
 * even does so as its own origin. So before the token is looked at, every POST is checked for
 * what only a page's request carries (`crossSiteRefusal`): a foreign `Origin`, a `Host` that
 * does not name the loopback listener, and a body a page can send without asking first.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { ListenAddress } from './listen.js';

/** What one listener does with a mutating request. */
export type ControlAccess =
  | { readonly kind: 'open' }
  | { readonly kind: 'token'; readonly digest: Buffer }
  | { readonly kind: 'off'; readonly reason: string };

export interface ControlPolicy {
  /** The `--listen` listener's access. */
  readonly main: ControlAccess;
  /** The `--admin-listen` listener's (loopback only, so no token is needed there). */
  readonly admin: ControlAccess;
  /** One line for the start-up log when the main listener serves them to no one. */
  readonly warning: string | undefined;
}

/** The shortest token accepted: anything shorter could be guessed through the endpoint. */
export const MIN_TOKEN_LENGTH = 16;

/** Why a token cannot be used (never quoting it), or undefined. */
export function controlTokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    return `the control token must be at least ${MIN_TOKEN_LENGTH} characters, without spaces`;
  }
  return undefined;
}

const CONTROL_PATHS = 'POST /-/suspend, /-/resume and /-/reconcile';

/** `localhost`, 127.0.0.0/8 and ::1 (also as an IPv4-mapped address): reachable only locally. */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) !== 6) return false;
  try {
    // The URL parser spells every form of an address one way (`0:0::1` is `::1`).
    const canonical = new URL(`http://[${host}]/`).hostname;
    return canonical === '[::1]' || canonical.startsWith('[::ffff:7f');
  } catch {
    return false; // a zone id (fe80::1%eth0): a link, not loopback
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * The access of each listener. A token, when given, is required on the main listener whatever
 * its address (it was asked for); the admin listener is loopback-only and needs none.
 */
export function controlPolicy(
  listen: ListenAddress | false,
  token: string | undefined,
  admin: ListenAddress | undefined,
): ControlPolicy {
  const open: ControlAccess = { kind: 'open' };
  if (token !== undefined) {
    return { main: { kind: 'token', digest: digest(token) }, admin: open, warning: undefined };
  }
  if (admin !== undefined) {
    const reason = `${CONTROL_PATHS} are served on the admin listener (${admin.host}:${admin.port}) only`;
    return { main: { kind: 'off', reason }, admin: open, warning: undefined };
  }
  if (listen === false || isLoopbackHost(listen.host)) {
    return { main: open, admin: open, warning: undefined };
  }
  const where = `${listen.host}:${listen.port}`;
  const reason = `${CONTROL_PATHS} are off: the listener ${where} is not loopback-only and no control token is set (--control-token-file or EDGESYNC_CONTROL_TOKEN; or --admin-listen 127.0.0.1:PORT)`;
  return { main: { kind: 'off', reason }, admin: open, warning: reason };
}

export type ControlVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: 401 | 403 | 415; readonly error: string };

/** The request headers `crossSiteRefusal` reads (lower-case names, as node:http gives them). */
export interface ControlRequestHeaders {
  readonly host?: string | undefined;
  readonly origin?: string | undefined;
  readonly 'content-type'?: string | undefined;
  readonly 'content-length'?: string | undefined;
  readonly 'transfer-encoding'?: string | undefined;
}

/** Characters a `Host` header may hold: a name or address and a port (no user info, no path). */
const HOST_HEADER = /^[A-Za-z0-9.:[\]-]+$/;

/** `application/json` or any `+json` type, parameters allowed. */
const JSON_TYPE = /^application\/([a-z0-9.-]+\+)?json\s*(;|$)/i;

/**
 * Why a mutating request is refused as cross-site or rebinding, or undefined:
 * - `Origin` (sent by browsers on every POST, never by curl, git-sync or edgesync) must be this
 *   listener's own origin: any other page is another site;
 * - on a listener that takes no token (bound to loopback), `Host` must name a loopback address
 *   (`localhost`, 127.0.0.0/8, `::1`): a rebound name is some site's, resolved to us;
 * - the body must be empty or JSON (`Content-Type: application/json`): the types a page may send
 *   without the browser asking first (text/plain, forms) are refused, and a JSON one makes the
 *   browser ask (a CORS preflight), which this listener never grants.
 * A listener with a token is reached under any name (a Kubernetes Service), so its `Host` is
 * not checked: a page cannot know the token.
 */
export function crossSiteRefusal(
  access: ControlAccess,
  headers: ControlRequestHeaders,
): ControlVerdict | undefined {
  const refuse = (status: 403 | 415, error: string): ControlVerdict => ({
    ok: false,
    status,
    error,
  });
  const host = headers.host?.trim().toLowerCase();
  if (host !== undefined && !HOST_HEADER.test(host)) {
    return refuse(403, 'refused: the Host header is not a host name and port');
  }
  if (host !== undefined && access.kind === 'open' && !isLoopbackHost(hostnameOf(host))) {
    return refuse(
      403,
      `refused: Host "${host}" does not name this loopback listener (a DNS-rebinding request?); use http://127.0.0.1:PORT or http://localhost:PORT`,
    );
  }
  const origin = headers.origin?.trim();
  if (origin !== undefined && !sameOrigin(origin, host)) {
    return refuse(403, 'refused: a cross-site request (its Origin is not this listener)');
  }
  const type = headers['content-type']?.trim();
  const length = headers['content-length'];
  const hasBody =
    headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
  if (
    (type !== undefined && type !== '' && !JSON_TYPE.test(type)) ||
    (hasBody && type === undefined)
  ) {
    return refuse(
      415,
      'refused: a control request takes an empty body or a JSON one (Content-Type: application/json)',
    );
  }
  return undefined;
}

/** `localhost`, `127.0.0.1` or `::1` from a Host header value (`[::1]:9090`). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** Whether `origin` is `http://<host>`: the page was served by this listener itself. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.host === host && origin === url.origin;
  } catch {
    return false; // `null` (a sandboxed page, a file:) and anything else that is no origin
  }
}

/** Checks one request's `Authorization` header against the listener's access. */
export function authorize(access: ControlAccess, header: string | undefined): ControlVerdict {
  if (access.kind === 'open') return { ok: true };
  if (access.kind === 'off') return { ok: false, status: 403, error: access.reason };
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  if (match?.[1] === undefined) {
    return { ok: false, status: 401, error: 'a bearer token is required (Authorization: Bearer)' };
  }
  // Digests of equal length: timingSafeEqual then leaks neither the token nor its length.
  if (!timingSafeEqual(digest(match[1]), access.digest)) {
    return { ok: false, status: 401, error: 'wrong control token' };
  }
  return { ok: true };
}
