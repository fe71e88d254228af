/**
 * The client's transport: one HTTP exchange with the Edge API (headers, timeout, the client-side
 * rate limit, retries through the shared loop of ../retry.ts with the API's rules of ./retry.ts,
 * typed errors with the key redacted) and the validation of the answer against its zod schema. The client's methods (./client.ts, from the table in ./routes.ts) and pagination
 * (./pagination.ts) are built on `send`; the bytes go through an `HttpExchange` (./exchange.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import {
  ApiError,
  ApiResponseError,
  type EdgesyncError,
  errorMessage,
  FencedWriteError,
  NetworkError,
  TimeoutError,
} from '../errors.js';
import { API_VERSION } from '../hosted/edge-api.js';
import {
  abortedError,
  parseRetryAfter,
  realSleep,
  retrying,
  type Sleep,
  throwIfAborted,
} from '../retry.js';
import { normalizeBaseUrl } from './config.js';
import {
  createExchange,
  type HttpExchange,
  type HttpMethod,
  type HttpResponse,
} from './exchange.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';
import {
  type AttemptFailure,
  classifyFailure,
  DEFAULT_RETRY,
  mayHaveBeenPerformed,
  type RetryOptions,
  requestNotSent,
} from './retry.js';
import { type ApiErrorBody, apiErrorBodySchema } from './schemas.js';
import type { ApiClientOptions, ResponseInfo } from './types.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** 429s one call may absorb through the limiter before it fails like any other retryable error. */
const MAX_THROTTLES = 30;
export const DEFAULT_USER_AGENT = 'edgesync';

export interface Call {
  readonly method: HttpMethod;
  /** The path template, for logs and metrics (`/edges/tls/{id}`). */
  readonly route: string;
  /** Relative to the base URL, query included. */
  readonly path: string;
  readonly body?: unknown;
  readonly signal: AbortSignal | undefined;
  /** Checked as each attempt leaves (`RequestOptions.fence`). */
  readonly fence?: (() => void) | undefined;
}

interface Answer {
  readonly status: number;
  readonly text: string;
}

type AttemptResult =
  | ({ readonly ok: true } & Answer)
  | {
      readonly ok: false;
      readonly failure: AttemptFailure;
      readonly toError: (outcomeUnknown: boolean) => EdgesyncError;
    };

export interface Transport {
  readonly baseUrl: string;
  /** Sends the call and returns its validated answer. */
  send<T>(call: Call, schema: z.ZodType<T>): Promise<T>;
  /** Sends the call; its answer's body is not read (deletes answer 204). */
  sendNoContent(call: Call): Promise<void>;
  close(): Promise<void>;
}

export function createTransport(options: ApiClientOptions): Transport {
  // An injected exchange belongs to the caller (not closed here); the default one is ours.
  const { exchange: http, close: closeHttp } =
    options.http === undefined
      ? createExchange()
      : { exchange: options.http, close: async () => {} };
  const w = wireOf(options, http);
  return {
    baseUrl: w.baseUrl,
    send: (call, schema) => sendParsed(w, call, schema),
    // Deletes answer 204; any body a server adds carries nothing we need.
    sendNoContent: async (call) => {
      await exchange(w, call);
    },
    close: closeHttp,
  };
}

/** What every exchange of one transport shares: its settings, limiter and headers. */
interface Wire {
  readonly options: ApiClientOptions;
  readonly baseUrl: string;
  readonly http: HttpExchange;
  readonly timeoutMs: number;
  readonly retry: Required<RetryOptions>;
  readonly sleep: Sleep;
  readonly now: () => number;
  readonly random: () => number;
  readonly log: ApiClientOptions['logger'];
  readonly limiter: RateLimiter | undefined;
  readonly headers: Record<string, string>;
  readonly bodyHeaders: Record<string, string>;
  /**
   * Neither the key nor a known secret value may reach a message, whatever a server or a library
   * echoes (a server may quote the request body). Applied to the whole text, before any excerpt
   * is cut from it: a secret cut in two would no longer be recognised.
   */
  readonly redact: (text: string) => string;
}

function wireOf(options: ApiClientOptions, http: HttpExchange): Wire {
  const { apiKey } = options;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    'svc-version': API_VERSION,
    accept: 'application/json',
    'user-agent': options.userAgent ?? DEFAULT_USER_AGENT,
  };
  const mask = options.mask ?? ((text: string) => text);
  return {
    options,
    baseUrl: normalizeBaseUrl(options.baseUrl),
    http,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry:
      options.retry === false
        ? { ...DEFAULT_RETRY, maxAttempts: 1 }
        : { ...DEFAULT_RETRY, ...definedFields(options.retry ?? {}) },
    sleep,
    now,
    random: options.random ?? Math.random,
    log: options.logger,
    limiter:
      options.rateLimiter ??
      (options.rateLimit === undefined
        ? undefined
        : createRateLimiter(options.rateLimit, { now, sleep })),
    headers,
    bodyHeaders: { ...headers, 'content-type': 'application/json' },
    redact: (text) => mask(apiKey === '' ? text : text.split(apiKey).join('[redacted]')),
  };
}

function report(w: Wire, info: ResponseInfo): void {
  w.log?.debug(info, 'api response');
  if (w.options.onResponse === undefined) return;
  try {
    w.options.onResponse(info);
  } catch (err) {
    // A metrics hook must not turn a successful call into a failed one.
    w.log?.error({ err: w.redact(errorMessage(err)) }, 'onResponse hook failed');
  }
}

async function attemptOnce(w: Wire, call: Call, attempt: number): Promise<AttemptResult> {
  const { method, path } = call;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, w.timeoutMs);
  const onAbort = () => controller.abort();
  call.signal?.addEventListener('abort', onAbort, { once: true });
  const started = w.now();
  try {
    const res = await w.http({
      method,
      url: w.baseUrl + path,
      headers: call.body === undefined ? w.headers : w.bodyHeaders,
      body: call.body === undefined ? null : JSON.stringify(call.body),
      signal: controller.signal,
    });
    const { status, text } = res;
    report(w, { method, route: call.route, status, durationMs: w.now() - started, attempt });
    if (status >= 200 && status < 300) return { ok: true, status, text };
    return refusal(w, call, res);
  } catch (err) {
    report(w, { method, route: call.route, status: 0, durationMs: w.now() - started, attempt });
    if (call.signal?.aborted) throw abortedError(call.signal);
    return unanswered(w, call, err, timedOut);
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
  }
}

/** An answer outside 2xx: its status, Retry-After, and the error it makes (masked). */
function refusal(w: Wire, call: Call, res: HttpResponse): AttemptResult {
  const { method, path } = call;
  const { status, text } = res;
  const { redact } = w;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], w.now());
  const parsed = parseErrorBody(text);
  const sentId = parsed.details?.operation_id ?? headerValue(res.headers['svc-operation-id']);
  // Server-provided text like the message: masked too.
  const operationId = sentId === undefined ? undefined : redact(sentId);
  return {
    ok: false,
    failure: {
      kind: 'status',
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    toError: (outcomeUnknown) =>
      new ApiError({
        method,
        path,
        status,
        errorCode: parsed.error_code,
        apiMessage:
          parsed.msg === undefined ? fallbackMessage(status, redact(text)) : redact(parsed.msg),
        operationId,
        retryAfter: retryAfterMs === undefined ? undefined : retryAfterMs / 1000,
        outcomeUnknown,
      }),
  };
}

/** No answer: the timeout, or a network failure (sent or not). */
function unanswered(w: Wire, call: Call, err: unknown, timedOut: boolean): AttemptResult {
  const { method, path } = call;
  if (timedOut) {
    return {
      ok: false,
      failure: { kind: 'timeout' },
      toError: (outcomeUnknown) =>
        new TimeoutError(method, path, w.timeoutMs, { cause: err, outcomeUnknown }),
    };
  }
  return {
    ok: false,
    failure: { kind: 'network', sent: !requestNotSent(err) },
    toError: (outcomeUnknown) =>
      new NetworkError(method, path, {
        cause: err,
        reason: w.redact(networkReason(err)),
        outcomeUnknown,
      }),
  };
}

/**
 * Sends a call until it gets a 2xx answer, a final failure, or its retries run out: the shared
 * loop (../retry.ts) with the API's rules. Each attempt takes a slot of the limiter, then asks
 * the fence, then goes; a 429 the limiter absorbs costs no attempt (the next acquire waits the
 * window out).
 */
async function exchange(w: Wire, call: Call): Promise<Answer> {
  const { retry, log } = w;
  let throttles = 0;
  const loop = {
    attempts: retry.maxAttempts,
    backoff: { baseMs: retry.baseDelayMs, maxMs: retry.maxDelayMs },
    maxRetryAfterMs: retry.maxRetryAfterMs,
    sleep: w.sleep,
    random: w.random,
    signal: call.signal,
    onAbort: 'aborted',
    onRetry: (attempt: number, delayMs: number, failure: unknown) =>
      log?.warn(
        { method: call.method, route: call.route, attempt, delayMs, failure: failedWith(failure) },
        'retrying API request',
      ),
  } as const;
  return retrying<Answer>(loop, async (attempt) => {
    const result = await attemptThroughLimiter(w, call, attempt);
    if (result.ok) return { done: true, value: result };
    const { failure } = result;
    const verdict = classifyFailure(call.method, failure);
    // Reads have no outcome to be unsure of; a refused or rate-limited write did nothing.
    const outcomeUnknown =
      verdict !== 'fail' && call.method !== 'GET' && mayHaveBeenPerformed(failure);
    const error = result.toError(outcomeUnknown);
    if (failure.kind === 'status' && failure.status === 429) {
      w.options.onThrottled?.();
      if (w.limiter !== undefined && throttles < MAX_THROTTLES) {
        // The budget is shared: every request of the process pauses (once) until the window
        // frees, and this one goes again when a slot does. It does not use up a retry: the
        // 429 says "not now", not "failed", and the limiter makes sure the cycle progresses.
        throttles += 1;
        log?.warn(
          { method: call.method, route: call.route, throttles },
          'rate limited (429): pausing every request of this account until the window frees',
        );
        return { done: false, failure: error, costsNoAttempt: true };
      }
    }
    if (verdict !== 'retry') throw error;
    const retryAfterMs = failure.kind === 'status' ? failure.retryAfterMs : undefined;
    return { done: false, failure: error, retryAfterMs };
  });
}

/**
 * One attempt under the limiter: a slot, then the fence at the moment the request leaves
 * (nothing is awaited between this check and the send, so a lease lost or writes suspended
 * while this call waited, in the limiter or out a retry's backoff, stops it here, and the slot
 * it was granted goes back), then the exchange, its answer told to the limiter.
 */
async function attemptThroughLimiter(w: Wire, call: Call, attempt: number): Promise<AttemptResult> {
  const { limiter } = w;
  throwIfAborted(call.signal);
  const sentAt = await limiter?.acquire(call.signal, w.options.priority?.() ?? 'normal');
  const refused = stopped(call);
  if (refused !== undefined) {
    if (sentAt !== undefined) limiter?.unused(sentAt);
    throw refused;
  }
  let result: AttemptResult | undefined;
  try {
    result = await attemptOnce(w, call, attempt);
  } finally {
    // The slot is timed from the answer: the service counted the request before it. A 429
    // tells the limiter more than that: when the window frees.
    if (sentAt !== undefined && limiter !== undefined) {
      const throttle = throttleOf(result);
      if (throttle === undefined) limiter.answered(sentAt);
      else limiter.throttled(throttle.retryAfterMs, sentAt);
    }
  }
  return result;
}

/** What a failed attempt's log line says: the status, or the kind of failure. */
function failedWith(failure: unknown): number | string {
  if (failure instanceof ApiError) return failure.status;
  if (failure instanceof TimeoutError) return 'timeout';
  return 'network';
}

/**
 * Why this attempt must not leave: the caller's signal fired (an abort during the limiter's wait
 * or the backoff), or the call's fence refused it. Undefined: it may go.
 */
function stopped(call: Call): EdgesyncError | undefined {
  if (call.signal?.aborted) return abortedError(call.signal);
  if (call.fence === undefined) return undefined;
  try {
    call.fence();
    return undefined;
  } catch (err) {
    return new FencedWriteError(call.method, call.path, errorMessage(err), { cause: err });
  }
}

/** Sends the call and validates its answer's body against `schema`. */
async function sendParsed<T>(w: Wire, call: Call, schema: z.ZodType<T>): Promise<T> {
  const answer = await exchange(w, call);
  const fail = (problem: string, cause?: unknown) =>
    new ApiResponseError({
      method: call.method,
      path: call.path,
      status: answer.status,
      problem: w.redact(problem),
      cause,
    });
  if (answer.text.trim() === '') throw fail('empty body');
  let data: unknown;
  try {
    data = JSON.parse(answer.text);
  } catch (err) {
    throw fail(`body is not JSON: ${snippet(w.redact(answer.text))}`, err);
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw fail(describeIssues(parsed.error.issues), parsed.error);
  return parsed.data;
}

/** The 429 of a failed attempt, if it was one. */
function throttleOf(
  result: AttemptResult | undefined,
): { readonly retryAfterMs?: number | undefined } | undefined {
  if (result === undefined || result.ok) return undefined;
  const { failure } = result;
  return failure.kind === 'status' && failure.status === 429 ? failure : undefined;
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The error body's fields when it is the API's JSON error; nothing when it is not (HTML, text). */
function parseErrorBody(text: string): ApiErrorBody {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return {};
  }
  const parsed = apiErrorBodySchema.safeParse(data);
  return parsed.success ? parsed.data : {};
}

function fallbackMessage(status: number, text: string): string {
  const reason = STATUS_CODES[status] ?? 'unknown status';
  const body = text.trim();
  return body === '' ? reason : `${reason} (non-JSON body: ${snippet(body)})`;
}

/** A short, single-line excerpt of a body for an error message. */
function snippet(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function networkReason(err: unknown): string {
  const message = errorMessage(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && !message.includes(code)) return `${code}: ${message}`;
  return message === '' && err instanceof AggregateError
    ? err.errors.map(errorMessage).join('; ')
    : message;
}

/** At most five zod issues as `path: message`, e.g. `https_edges[3].routes[0].oauth: Required`. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => {
    let path = '';
    for (const key of issue.path) {
      path += typeof key === 'number' ? `[${key}]` : path === '' ? String(key) : `.${String(key)}`;
    }
    return `${path === '' ? '(body)' : path}: ${issue.message}`;
  });
  const more = issues.length > shown.length ? ` (+${issues.length - shown.length} more)` : '';
  return shown.join('; ') + more;
}
