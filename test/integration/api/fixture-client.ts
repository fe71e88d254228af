/**
 * A client for the transport-level integration tests: fast retries (10 ms), no jitter, sleeps
 * and answers recorded. The caller closes it (`c.close()`), after the test.
 */
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClientOptions, ResponseInfo } from '../../../src/api/types.js';

export function fixtureClient(
  baseUrl: string,
  apiKey: string,
  extra: Partial<ApiClientOptions> = {},
) {
  const responses: ResponseInfo[] = [];
  const sleeps: number[] = [];
  const c = createApiClient({
    baseUrl,
    apiKey,
    retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 },
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 1,
    onResponse: (r) => responses.push(r),
    ...extra,
  });
  return { c, responses, sleeps };
}
