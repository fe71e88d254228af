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
  | 'ES_NETWORK'
  | 'ES_TIMEOUT'
  | 'ES_ABORTED'
  | 'ES_PLAN_STALE'
  | 'ES_GUARD'
  | 'ES_CONFIG'
  | 'ES_STORE'
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

  constructor(dir: string, message: string, options?: { cause?: unknown }) {
    super('ES_MANIFEST_DIR', message, options);
    this.dir = dir;
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

  constructor(init: {
    method: string;
    path: string;
    status: number;
    errorCode?: string | undefined;
    apiMessage: string;
    operationId?: string | undefined;
    retryAfter?: number | undefined;
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
  }
}

/** The request never got an HTTP answer (refused, reset, DNS...). Outcome of a write: unknown. */
export class NetworkError extends EdgesyncError {
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, options?: { cause?: unknown }) {
    const reason = errorMessage(options?.cause);
    super('ES_NETWORK', `${method} ${path}: network error: ${reason}`, options);
    this.method = method;
    this.path = path;
  }
}

/** The request timed out. Outcome of a write: unknown. */
export class TimeoutError extends EdgesyncError {
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;

  constructor(method: string, path: string, timeoutMs: number, options?: { cause?: unknown }) {
    super('ES_TIMEOUT', `${method} ${path}: timed out after ${timeoutMs} ms`, options);
    this.method = method;
    this.path = path;
    this.timeoutMs = timeoutMs;
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

export function isEdgesyncError(err: unknown): err is EdgesyncError {
  return err instanceof EdgesyncError;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
