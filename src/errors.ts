/**
 * The one error hierarchy of edgesync. Every error we raise on purpose is an `EdgesyncError`
 * with a stable `code` (like undici's `UND_ERR_*`); callers branch on the class or the code,
 * never on the message. `cause` is always chained.
 */

export type ErrorCode =
  | 'ES_USAGE'
  | 'ES_MANIFEST'
  | 'ES_MANIFEST_DIR'
  | 'ES_API'
  | 'ES_API_RESPONSE'
  | 'ES_NETWORK'
  | 'ES_TIMEOUT'
  | 'ES_ABORTED'
  | 'ES_PLAN_STALE'
  | 'ES_GUARD'
  | 'ES_CONFIG'
  | 'ES_STORE'
  | 'ES_REQUEST'
  | 'ES_ACCOUNT_STATE'
  | 'ES_SUSPENDED'
  | 'ES_FILE_REFUSED'
  | 'ES_DISK_FULL'
  | 'ES_LEASE'
  | 'ES_LEASE_CONFLICT'
  | 'ES_LEASE_ACCESS'
  | 'ES_LOST_LEADERSHIP'
  | 'ES_DAEMON'
  | 'ES_FENCED'
  | 'ES_INTERNAL';

export class EdgesyncError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad command-line usage: exit code 64. */
export class UsageError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_USAGE', message, options);
  }
}

/** Invalid configuration from flags or environment (not the manifests). */
export class ConfigError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_CONFIG', message, options);
  }
}

/** A position in a manifest file, 1-based, as editors show it. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** One finding about the manifests: where, which field, what is wrong. */
export interface Diagnostic extends SourcePosition {
  /** Dotted field path inside the document, e.g. `routes[0].oauth.provider`. Empty for the document itself. */
  readonly path: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

/** The manifest set is invalid: carries every diagnostic at once. */
export class ManifestError extends EdgesyncError {
  readonly diagnostics: readonly Diagnostic[];

  constructor(diagnostics: readonly Diagnostic[], options?: { cause?: unknown }) {
    super('ES_MANIFEST', `${diagnostics.length} manifest error(s)`, options);
    this.diagnostics = diagnostics;
  }
}

/** The manifest directory is missing or unreadable: desired state unknown, never "empty". */
export class ManifestDirError extends EdgesyncError {
  readonly dir: string;
  /** What is wrong with it, in a few words (`does not exist`, `not a directory`...). */
  readonly detail: string | undefined;

  constructor(
    dir: string,
    message: string,
    options?: { cause?: unknown; detail?: string | undefined },
  ) {
    super('ES_MANIFEST_DIR', message, options);
    this.dir = dir;
    this.detail = options?.detail;
  }
}

/** The API answered with a non-2xx status. */
export class ApiError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly errorCode: string | undefined;
  readonly apiMessage: string;
  readonly operationId: string | undefined;
  /** Seconds from a `Retry-After` header, when the server sent one. */
  readonly retryAfter: number | undefined;
  /**
   * True when a write may or may not have been performed (a 5xx answer to a POST, or to a
   * PATCH/PUT/DELETE whose retries ran out): the caller must look before it tries again. Never
   * true for reads or for answers that prove nothing happened (4xx, 429, refused connections).
   */
  readonly outcomeUnknown: boolean;

  constructor(init: {
    method: string;
    path: string;
    status: number;
    errorCode?: string | undefined;
    apiMessage: string;
    operationId?: string | undefined;
    retryAfter?: number | undefined;
    outcomeUnknown?: boolean | undefined;
    cause?: unknown;
  }) {
    const code = init.errorCode ? ` ${init.errorCode}` : '';
    super('ES_API', `${init.method} ${init.path}: ${init.status}${code}: ${init.apiMessage}`, {
      cause: init.cause,
    });
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.errorCode = init.errorCode;
    this.apiMessage = init.apiMessage;
    this.operationId = init.operationId;
    this.retryAfter = init.retryAfter;
    this.outcomeUnknown = init.outcomeUnknown ?? false;
  }
}

/** The API answered 2xx, but the body is not the shape the specification promises. */
export class ApiResponseError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  readonly status: number;

  constructor(init: {
    method: string;
    path: string;
    status: number;
    problem: string;
    cause?: unknown;
  }) {
    super(
      'ES_API_RESPONSE',
      `${init.method} ${init.path}: unexpected response (${init.status}): ${init.problem}`,
      { cause: init.cause },
    );
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
  }
}

/** The request never got an HTTP answer (refused, reset, DNS...). Outcome of a write: unknown. */
export class NetworkError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  /** See `ApiError.outcomeUnknown`: false when the request provably never left (refused). */
  readonly outcomeUnknown: boolean;

  constructor(
    method: string,
    path: string,
    options?: { cause?: unknown; reason?: string; outcomeUnknown?: boolean },
  ) {
    const reason = options?.reason ?? errorMessage(options?.cause);
    super('ES_NETWORK', `${method} ${path}: network error: ${reason}`, { cause: options?.cause });
    this.method = method;
    this.path = path;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}

/** The request timed out. Outcome of a write: unknown. */
export class TimeoutError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;
  /** See `ApiError.outcomeUnknown`. */
  readonly outcomeUnknown: boolean;

  constructor(
    method: string,
    path: string,
    timeoutMs: number,
    options?: { cause?: unknown; outcomeUnknown?: boolean },
  ) {
    super('ES_TIMEOUT', `${method} ${path}: timed out after ${timeoutMs} ms`, {
      cause: options?.cause,
    });
    this.method = method;
    this.path = path;
    this.timeoutMs = timeoutMs;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}

/**
 * A running daemon did not do what the command line asked (`status`, `reconcile`, `suspend`,
 * `resume`): unreachable, refused (`status` 401 or 403), or not an edgesync daemon.
 */
export class DaemonError extends EdgesyncError {
  /** The HTTP status it answered, if it answered. */
  readonly status: number | undefined;

  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super('ES_DAEMON', message, { cause: options?.cause });
    this.status = options?.status;
  }
}

/** Work stopped because its AbortSignal fired (shutdown). */
export class AbortedError extends EdgesyncError {
  constructor(message = 'aborted', options?: { cause?: unknown }) {
    super('ES_ABORTED', message, options);
  }
}

/** A safety guard refused the operation (max deletes, empty set, protect...). */
export class GuardError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_GUARD', message, options);
  }
}

/** A saved plan no longer matches the live state or the manifests. */
export class StalePlanError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_PLAN_STALE', message, options);
  }
}

/**
 * A file refused before it is read: not a regular file (a FIFO, a socket or a device put where a
 * file was expected, refused instead of waited on) or larger than the reader's cap. Callers say
 * which file; `reason` lets them word it.
 */
export class FileRefusedError extends EdgesyncError {
  readonly reason: 'not-a-file' | 'too-large';

  constructor(reason: 'not-a-file' | 'too-large', message: string) {
    super('ES_FILE_REFUSED', message);
    this.reason = reason;
  }
}

/**
 * The file system has no room left (ENOSPC, or EDQUOT: the user's quota): said plainly, never as
 * an internal error. The message says what could not be written and what was left behind.
 */
export class DiskFullError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_DISK_FULL', message, options);
  }
}

/** An error of a file-system call that means "no space left" (the errno, anywhere on the chain). */
export function isDiskFull(err: unknown): boolean {
  for (let at = err, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    const code = (at as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  }
  return false;
}

/**
 * What `main` reports for an error no command wrapped: a full disk is a `DiskFullError` ("disk
 * full: ..."), not an internal error; anything else is returned as it is.
 */
export function knownSystemError(err: unknown): unknown {
  if (err instanceof EdgesyncError || !isDiskFull(err)) return err;
  return new DiskFullError(`disk full: ${errorMessage(err)}`, { cause: err });
}

/** The leader-election Lease store failed (no answer in time, an unexpected HTTP status): retried. */
export class LeaseError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_LEASE', message, options);
  }
}

/** Another replica changed the Lease first (HTTP 409): not a failure, the race is just lost. */
export class LeaseConflictError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_LEASE_CONFLICT', message, options);
  }
}

/** The Lease API refuses access (401/403): fatal, the message names the missing RBAC rule. */
export class LeaseAccessError extends EdgesyncError {
  readonly status: number;

  constructor(status: number, message: string, options?: { cause?: unknown }) {
    super('ES_LEASE_ACCESS', message, options);
    this.status = status;
  }
}

/** A write was refused because this process no longer holds a lease it renewed in time. */
export class LostLeadershipError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_LOST_LEADERSHIP', message, options);
  }
}

/**
 * A write the fence refused at the moment it was to leave (leadership lost, writes suspended, the
 * cycle aborted): that attempt was not sent, nor any after it. `cause` is the fence's own error.
 */
export class FencedWriteError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, message: string, options?: { cause?: unknown }) {
    super('ES_FENCED', message, options);
    this.method = method;
    this.path = path;
  }
}

export function isEdgesyncError(err: unknown): err is EdgesyncError {
  return err instanceof EdgesyncError;
}

/** The API said 404: the resource is not there (e.g. already deleted). Callers decide what it means. */
export function isNotFound(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 404;
}

/**
 * A write may or may not have happened (timeout, reset or 5xx on a POST...): look at the live
 * state before trying again, or a retried create can make a duplicate.
 */
export function isOutcomeUnknown(err: unknown): err is ApiError | NetworkError | TimeoutError {
  return (
    (err instanceof ApiError || err instanceof NetworkError || err instanceof TimeoutError) &&
    err.outcomeUnknown
  );
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * An account state that no retry can change: the account's edges are read-only, or the account
 * has no access to edges. Recognised by the codes of the local server and, for the hosted
 * service (whose codes the notes do not give), by a 403 whose message names the state. A cycle
 * that meets one ends at once: no retries, no further writes.
 */
export function accountStateOf(err: unknown): 'read-only' | 'no-access' | undefined {
  if (!(err instanceof ApiError) || err.status !== 403) return undefined;
  if (err.errorCode === 'ERR_SVC_7301' || /read[- ]only/i.test(err.apiMessage)) return 'read-only';
  if (
    err.errorCode === 'ERR_SVC_7302' ||
    /no access|not (enabled|available)/i.test(err.apiMessage)
  ) {
    return 'no-access';
  }
  return undefined;
}

export const ACCOUNT_STATE_MESSAGE = {
  'read-only':
    "the account's edges are read-only: the API refuses every write to them. Nothing more was written this cycle; ask the account's owner to lift the read-only state",
  'no-access':
    'the account has no access to edges: the API refuses every request to them. Nothing more was written this cycle; check that the API key belongs to the right account',
} as const;
