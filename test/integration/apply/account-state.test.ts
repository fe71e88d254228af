/**
 * Account states (issue 10): a write refused because the account's edges are read-only, or
 * because the account has no access to edges, ends the cycle at once with a clear message: no
 * retries, no further writes. Against the local server started in that state.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReconciler } from '../../../src/engine/index.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';
import { startTestServer } from '../../helpers/server.js';
import { apiClient, apiEnv, runCli, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const MANIFESTS = [
  { kind: 'TLSEdge', name: 'a', hostports: ['a.example.com:443'] },
  { kind: 'TLSEdge', name: 'b', hostports: ['b.example.com:443'] },
  {
    kind: 'HTTPSEdge',
    name: 'c',
    hostports: ['c.example.com:443'],
    routes: [{ match_type: 'path_prefix', match: '/', backend: { backend_id: 'bkdhr_1' } }],
  },
  { kind: 'BotUser', name: 'ci' },
];

const writes = (s: Server) =>
  (s.requests.POST ?? 0) +
  (s.requests.PATCH ?? 0) +
  (s.requests.PUT ?? 0) +
  (s.requests.DELETE ?? 0);

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;

beforeEach(async () => {
  tmp = await tempDir();
  dir = path.join(tmp.dir, 'edges');
  await writeManifests(dir, MANIFESTS);
});
afterEach(async () => {
  await server.close();
  await tmp.cleanup();
});

describe('account states', () => {
  it('read-only edges: apply stops at the first refusal, says why, and sends nothing more', async () => {
    server = await startTestServer({ edgeAccess: 'read-only' });
    const run = await runCli(['apply', '--yes', '--concurrency', '1', dir], {
      env: apiEnv(server.url, server.apiKey),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the account's edges are read-only");
    // The plan's first write (the bot user: not an edge) went through; the next one, an edge,
    // was refused once (403, never retried), and nothing else was sent.
    expect(server.statuses[403]).toBe(1);
    expect(writes(server)).toBe(2);
  });

  it('read-only edges with parallel workers: only the writes already in flight were sent', async () => {
    server = await startTestServer({ edgeAccess: 'read-only' });
    const run = await runCli(['apply', '--yes', '--concurrency', '4', dir], {
      env: apiEnv(server.url, server.apiKey),
    });
    expect(run.code).toBe(1);
    expect(writes(server)).toBeLessThanOrEqual(4);
    // Every write but the bot user's was refused: none was sent after the cycle ended.
    expect((server.requests.POST ?? 0) - (server.statuses[403] ?? 0)).toBeLessThanOrEqual(1);
  });

  it('no access to edges: plan and apply fail with a clear message and write nothing', async () => {
    server = await startTestServer({ edgeAccess: 'no-access' });
    const env = apiEnv(server.url, server.apiKey);
    const plan = await runCli(['plan', dir], { env });
    expect(plan.code).toBe(1);
    // Refused because the directory declares edges (cloud endpoints alone would be planned).
    expect(plan.stderr).toMatch(/the account has no access to edges .* 3 edges: /);
    const apply = await runCli(['apply', '--yes', dir], { env });
    expect(apply.code).toBe(1);
    expect(writes(server)).toBe(0);
  });

  it.each([
    ['read-only', "the account's edges are read-only"],
    ['no-access', 'the account has no access to edges'],
  ] as const)(
    'a daemon cycle against %s edges ends as an error with that message',
    async (state, message) => {
      server = await startTestServer({ edgeAccess: state });
      const client = apiClient(server.url, server.apiKey);
      try {
        const reconcile = createReconciler(reconcilerOptions({ client }));
        const run = reconcile({
          dir,
          revision: undefined,
          reason: 'startup',
          signal: new AbortController().signal,
          assertCurrent: async () => undefined,
        });
        if (state === 'read-only') {
          const report = await run;
          expect(report.result).toBe('error');
          expect(report.error).toContain(message);
          expect(report.writes).toBeLessThanOrEqual(1);
        } else {
          await expect(run).rejects.toThrow(message);
        }
        expect(writes(server)).toBeLessThanOrEqual(2);
      } finally {
        await client.close();
      }
    },
  );

  it('edgesync server --read-only-edges starts in that state', async () => {
    server = await startTestServer();
    const ac = new AbortController();
    const both = await runCli(['server', '--read-only-edges', '--no-edge-access'], {
      signal: ac.signal,
    });
    expect(both.code).toBe(64);
  });
});
