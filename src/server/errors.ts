/**
 * The server's own errors: `RequestError` is a refusal of one request (an HTTP status plus an
 * `ERR_SVC_*` code, rendered as api-notes' error body); `StoreError` is a persistence failure
 * (after which the store refuses writes rather than diverge from its log).
 */
import { EdgesyncError } from '../errors.js';
import { ERROR_CODE } from '../hosted/edge-api.js';
import type { AccountErrorCode } from './account-codes.js';
import type { DomainErrorCode } from './domain-codes.js';
import type { EndpointErrorCode } from './endpoints/codes.js';

export type ApiErrorCode =
  | (typeof ERROR_CODE)[keyof typeof ERROR_CODE]
  | EndpointErrorCode
  | DomainErrorCode
  | AccountErrorCode;

export class RequestError extends EdgesyncError {
  readonly status: number;
  /** `ERR_SVC_<n>`; undefined for the bodies api-notes allows without one. */
  readonly errorCode: ApiErrorCode | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    errorCode: ApiErrorCode | undefined,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super('ES_REQUEST', message, options);
    this.status = status;
    this.errorCode = errorCode;
    this.headers = options?.headers ?? {};
  }
}

export class StoreError extends EdgesyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ES_STORE', message, options);
  }
}

export function invalidValue(message: string): RequestError {
  return new RequestError(400, ERROR_CODE.invalidValue, message);
}
