import { describe, expect, it } from 'vitest';
import { ExitCode, exitCodeFor } from '../../src/cli/exit.js';
import {
  ApiError,
  EdgesyncError,
  FileRefusedError,
  LeaseAccessError,
  LeaseConflictError,
  LeaseError,
  LostLeadershipError,
  ManifestError,
  NetworkError,
  TimeoutError,
  UsageError,
} from '../../src/errors.js';

describe('error hierarchy', () => {
  it('keeps stable codes, names and chained causes', () => {
    const cause = new Error('ECONNRESET');
    const err = new NetworkError('POST', '/edges/tls', { cause });
    expect(err).toBeInstanceOf(EdgesyncError);
    expect(err.code).toBe('ES_NETWORK');
    expect(err.name).toBe('NetworkError');
    expect(err.cause).toBe(cause);
    expect(err.message).toBe('POST /edges/tls: network error: ECONNRESET');
  });

  it('formats API errors with method, path, status and error code', () => {
    const err = new ApiError({
      method: 'GET',
      path: '/edges/tls/edgtls_x',
      status: 404,
      errorCode: 'ERR_SVC_7000',
      apiMessage: 'not found',
      operationId: 'op_1',
    });
    expect(err.message).toBe('GET /edges/tls/edgtls_x: 404 ERR_SVC_7000: not found');
    expect(err.operationId).toBe('op_1');
  });

  it.each([
    [
      new FileRefusedError('not-a-file', 'not a regular file'),
      'ES_FILE_REFUSED',
      'FileRefusedError',
    ],
    [new LeaseError('get leases/x: HTTP 503'), 'ES_LEASE', 'LeaseError'],
    [
      new LeaseConflictError('update leases/x: conflict'),
      'ES_LEASE_CONFLICT',
      'LeaseConflictError',
    ],
    [new LeaseAccessError(403, 'refused'), 'ES_LEASE_ACCESS', 'LeaseAccessError'],
    [new LostLeadershipError('not the leader'), 'ES_LOST_LEADERSHIP', 'LostLeadershipError'],
  ])('folds %o into the hierarchy (code %s, exit code 1)', (err, code, name) => {
    expect(err).toBeInstanceOf(EdgesyncError);
    expect(err.code).toBe(code);
    expect(err.name).toBe(name);
    expect(exitCodeFor(err)).toBe(ExitCode.error);
  });

  it.each([
    [new UsageError('bad flag'), ExitCode.usage],
    [new LostLeadershipError('not the leader'), ExitCode.error],
    [new ManifestError([]), ExitCode.error],
    [new TimeoutError('GET', '/x', 10), ExitCode.error],
    [new Error('boom'), ExitCode.error],
  ])('maps %o to exit code %i', (err, code) => {
    expect(exitCodeFor(err)).toBe(code);
  });
});
