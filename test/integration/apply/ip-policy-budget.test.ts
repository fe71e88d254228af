/**
 * A new IP policy of 300 CIDRs under the API budget (the service's 120 requests a minute,
 * time-scaled to 120 per rolling 2 s): the apply spends the budget at its full rate with no
 * wasted 429 (301 writes: the policy's POST and one per rule), progress shows it as it goes,
 * and the next cycle costs one list call per kind (the rules listed account-wide, not per
 * policy).
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { observe } from '../../../src/api/index.js';
import type { RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, runCli, tempDir, writeManifests } from './helpers.js';

let server: RunningServer & { apiKey: string };
beforeAll(async () => {
  server = await startTestServer();
  server.knobs.rateLimit = { limit: 120, windowMs: 2000 };
});
afterAll(async () => {
  await server.close();
});

/** 300 distinct /32 ranges, alternately allowed and denied. */
const RULES = Array.from({ length: 300 }, (_, i) => ({
  cidr: `10.${Math.floor(i / 250)}.${i % 250}.1/32`,
  action: i % 2 === 0 ? 'allow' : 'deny',
}));

it('a policy of 300 CIDRs is applied at the budget with no 429, progress shown', async () => {
  const { dir, cleanup } = await tempDir();
  try {
    const manifests = path.join(dir, 'm');
    await writeManifests(manifests, [{ kind: 'IPPolicy', name: 'office', rules: RULES }]);
    const env = {
      EDGESYNC_API_URL: server.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
      EDGESYNC_RATE_LIMIT: '120/2s',
    };
    const r = await runCli(['apply', manifests, '--yes', '--concurrency', '4'], { env });
    expect(r.stderr).toContain('converged: the live state matches the manifests.');
    expect(r.code).toBe(0);
    expect(server.statuses[429] ?? 0).toBe(0);
    expect(server.statuses[201]).toBe(301);
    // Progress as it goes, every tenth of the operations, to the last.
    const progress = r.stderr.split('\n').filter((l) => l.startsWith('progress: '));
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(progress.at(-1)).toMatch(/^progress: 301\/301 operations/);

    // The next cycle lists each kind once: 300 rules are three pages of one listing.
    const client = apiClient(server.url, server.apiKey);
    try {
      const live = await observe(client);
      expect(live.resources?.ip_policy_rule).toHaveLength(300);
      expect(live.calls.ip_policy).toBe(1);
      expect(live.calls.ip_policy_rule).toBe(3);
    } finally {
      await client.close();
    }
  } finally {
    await cleanup();
  }
}, 120_000);
