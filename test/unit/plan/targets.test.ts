/** `--target` addresses: what each names (src/plan/targets.ts). */
import { describe, expect, it } from 'vitest';
import { resolveTargets } from '../../../src/plan/targets.js';

describe('resolveTargets', () => {
  it.each([
    ['https_edge.storefront', 'https_edge.storefront'],
    ['https_edge.api.v2', 'https_edge.api.v2'],
    ['https_edge.api.v2.route["/v1.0/x"]', 'https_edge.api.v2'],
    ['bot_user.ci#bot_2abc', 'bot_user.ci'],
    ['cloud_endpoint.portal', 'cloud_endpoint.portal'],
    ['  tls_edge.db ', 'tls_edge.db'],
  ])('%s names %s', (text, address) => {
    expect(resolveTargets([text])).toEqual({ ok: true, targets: new Set([address]) });
  });

  it.each([['edge.a'], ['https_edge'], ['https_edge.'], ['']])('%j is not an address', (text) => {
    const r = resolveTargets([text]);
    expect(r.ok).toBe(false);
  });
});
