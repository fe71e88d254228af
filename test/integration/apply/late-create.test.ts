/**
 * A create that lands after its client gave up (the server's `lateCreates` knob, over real
 * HTTP): the POST times out, the lookup finds nothing, the applier creates again, and then the
 * held original is performed too. The apply must not call that converged: it cleans an owned
 * duplicate edge in the same cycle (keeping the recorded one), deletes a duplicate bot user only
 * when it is provably its own (its own 201 answer), reports one it cannot prove, and a copy that
 * lands after the check is removed by the next cycle.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient, observe } from '../../../src/api/index.js';
import { applyAndVerify, type CycleOutcome } from '../../../src/apply/cycle.js';
import { observeAfterApply, ownBotUsersOf } from '../../../src/apply/verify.js';
import { loadManifests } from '../../../src/manifest/loader.js';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { buildPlan } from '../../../src/plan/index.js';
import type { LateCreates } from '../../../src/server/knobs.js';
import { seededRandom, startTestServer } from '../../helpers/server.js';
import { duplicates, snapshotOf, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

/** The client gives up on an answer after this long; a held create waits longer. */
const TIMEOUT_MS = 300;

const shop = {
  kind: 'HTTPSEdge',
  name: 'shop',
  hostports: [],
  routes: [{ match_type: 'path_prefix', match: '/', compression: {} }],
};

describe('a create that lands after its client gave up', () => {
  let server: Server;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let client: ApiClient;
  let run = 0;

  beforeAll(async () => {
    tmp = await tempDir();
  });
  afterEach(async () => {
    await client.close();
    await server.close();
  });
  afterAll(async () => {
    await tmp.cleanup();
  });

  async function start(late: LateCreates): Promise<void> {
    server = await startTestServer();
    server.knobs.lateCreates = late;
    client = createApiClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      timeoutMs: TIMEOUT_MS,
      retry: { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 20 },
    });
  }

  /** One apply cycle as the CLI runs it: plan on a full listing, apply, check, re-plan. */
  async function applyOnce(docs: Record<string, unknown>[]): Promise<CycleOutcome> {
    run += 1;
    const dir = path.join(tmp.dir, `m${run}`);
    await writeManifests(dir, docs);
    const loaded = await loadManifests(dir, { env: {} });
    if (!loaded.ok) throw new Error('invalid manifests');
    const live = await observe(client);
    const plan = buildPlan(loaded.set, live);
    return applyAndVerify(plan, {
      client,
      live,
      sleep: async () => {},
      random: seededRandom(7),
      replan: async (result) => {
        const again = await observeAfterApply(client, plan, live, result);
        const ownBotUsers = ownBotUsersOf(result);
        return { live: again, plan: buildPlan(loaded.set, again, { ownBotUsers }) };
      },
    });
  }

  const ownedShops = async () => {
    const live = await snapshotOf(server.url, server.apiKey);
    return live.httpsEdges.filter((e) => parseStoredMetadata(e.metadata)?.name === 'shop');
  };

  it('an owned duplicate edge that lands before the check is deleted in the same cycle', async () => {
    // The original is performed right after the applier's second attempt.
    await start({ count: 1, holdMs: 10_000, pathPrefix: '/edges/https', untilNextWrite: true });
    const outcome = await applyOnce([shop]);

    expect(outcome.result.uncertainCreates).toEqual([
      expect.objectContaining({ address: 'https_edge.shop', kind: 'edges', answered: true }),
    ]);
    const recorded = outcome.result.created['https_edge.shop'];
    expect(outcome.result.messages.join('\n')).toMatch(
      /https_edge\.shop#edghts_\w+: a create whose answer was lost landed late as a duplicate; deleted/,
    );
    expect(outcome.converged).toBe(true);
    const left = await ownedShops();
    expect(left.map((e) => e.id)).toEqual([recorded]);
    expect(left[0]?.routes.map((r) => r.match)).toEqual(['/']);
    expect(duplicates(await snapshotOf(server.url, server.apiKey))).toEqual([]);
  });

  it('a duplicate bot user this process provably created is deleted, the other kept', async () => {
    await start({ count: 1, holdMs: 10_000, pathPrefix: '/bot_users', untilNextWrite: true });
    const outcome = await applyOnce([{ kind: 'BotUser', name: 'ci' }]);

    const answered = outcome.result.created['bot_user.ci'];
    expect(outcome.result.uncertainCreates).toEqual([
      { address: 'bot_user.ci', name: 'ci', kind: 'bot_users', id: answered, answered: true },
    ]);
    expect(outcome.converged).toBe(true);
    const bots = (await snapshotOf(server.url, server.apiKey)).botUsers;
    // The late original stays: only the one whose 201 this process read is provably its own.
    expect(bots.map((b) => b.name)).toEqual(['ci']);
    expect(bots[0]?.id).not.toBe(answered);
  });

  it('duplicate bot users none of which is provably its own are reported, not deleted', async () => {
    // Two attempts lost, both land late after the third: the two late ones are nobody's proof.
    await start({ count: 2, holdMs: 10_000, pathPrefix: '/bot_users', untilNextWrite: true });
    const outcome = await applyOnce([{ kind: 'BotUser', name: 'ci' }]);

    const bots = (await snapshotOf(server.url, server.apiKey)).botUsers;
    expect(bots.map((b) => b.name)).toEqual(['ci', 'ci']);
    expect(bots.map((b) => b.id)).not.toContain(outcome.result.created['bot_user.ci']);
    expect(outcome.converged).toBe(false);
    const report = outcome.result.messages.find((m) => m.startsWith('bot_user.ci: 2 bot users'));
    expect(report).toContain('none can be proven to be one edgesync created, so none was deleted');
    for (const b of bots) expect(report).toContain(b.id);
  });

  it('an owned duplicate that lands after the check is deleted by the next cycle', async () => {
    await start({ count: 1, holdMs: 1_500, pathPrefix: '/edges/https' });
    const first = await applyOnce([shop]);
    const recorded = first.result.created['https_edge.shop'];
    expect(first.result.uncertainCreates?.length).toBe(1);
    // The held original is performed once its time is up, whatever the client did (on a slow
    // machine it may land before the check, and the first cycle cleans it).
    const cleanedEarly = first.result.messages.some((m) => m.includes('landed late'));
    if (!cleanedEarly) {
      await expect.poll(async () => (await ownedShops()).length, { timeout: 10_000 }).toBe(2);
    }

    const second = await applyOnce([shop]);
    expect(second.result.errors).toEqual([]);
    expect(second.converged).toBe(true);
    expect((await ownedShops()).map((e) => e.id)).toEqual([recorded]);
  });
});
