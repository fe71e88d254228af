/**
 * `edgesync run` in-process (through `main()`) against the local server, behind a recording
 * proxy that sees every request the daemon makes: adding, editing, renaming, breaking
 * and removing manifest files converges, each step with exactly the writes it needs, observed
 * through `/status` and the server; an edit made directly through the API is undone by the next
 * periodic resync.
 */
import { rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type RecordingProxy,
  startRecordingProxy,
  waitFor,
  waitForCycle,
} from '../../../bench/harness.js';
import type { ApiClient } from '../../../src/api/index.js';
import type { DaemonStatus } from '../../../src/daemon/types.js';
import { type InProcessDaemon, startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import {
  apiClient,
  httpsEdge,
  liveState,
  ownedEdges,
  tempDir,
  tlsEdge,
  writeYaml,
} from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let proxy: RecordingProxy;
let client: ApiClient;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let edges: string;

beforeEach(async () => {
  server = await startTestServer();
  proxy = await startRecordingProxy(server.url);
  client = apiClient(server.url, server.apiKey);
  tmp = await tempDir();
  edges = path.join(tmp.dir, 'edges');
});

afterEach(async () => {
  await stopDaemons();
  await client.close();
  await proxy.close();
  await server.close();
  await tmp.cleanup();
});

function spawnDaemon(interval: string): Promise<InProcessDaemon> {
  return startDaemon({
    args: [edges, '--interval', interval, '--debounce', '50ms'],
    cwd: tmp.dir,
    env: {
      EDGESYNC_API_URL: proxy.url,
      EDGESYNC_API_KEY: server.apiKey,
      EDGESYNC_OWNER: 'default',
    },
  });
}

const settled = (s: DaemonStatus) =>
  s.last_reconcile !== null &&
  (s.last_reconcile.result === 'converged' || s.last_reconcile.result === 'changed');

/** `METHOD /path` of the writes the server saw since `since`, IDs replaced by `{id}`, sorted. */
function writesSince(since: number): string[] {
  return proxy
    .writes()
    .filter((w) => w.at >= since)
    .map((w) => `${w.method} ${w.path.replace(/\/(edg|rt|bot)[a-z]*_[A-Za-z0-9]+/g, '/{id}')}`)
    .sort();
}

/** Waits until the server holds exactly `names` and a cycle begun after `since` settled. */
async function converged(
  daemon: InProcessDaemon,
  since: number,
  names: string[],
): Promise<DaemonStatus> {
  await waitFor(`the server to hold ${names.join(', ')}`, async () => {
    const owned = ownedEdges(await liveState(client));
    return JSON.stringify(owned) === JSON.stringify(names);
  });
  return waitForCycle(daemon, since, settled);
}

describe('edgesync run converges on file changes', () => {
  it('adds, edits, renames, rejects and removes, each with exactly the writes it needs', async () => {
    await writeYaml(path.join(edges, 'db.yaml'), [tlsEdge('db')]);
    await writeYaml(path.join(edges, 'web.yaml'), [httpsEdge('web')]);
    // An hour: every cycle after the first is a file-triggered one.
    const daemon = await spawnDaemon('1h');

    let t = Date.now();
    let s = await converged(daemon, 0, ['https:web', 'tls:db']);
    expect(s.ready).toBe(true);
    expect(writesSince(0)).toEqual([
      'POST /edges/https',
      'POST /edges/https/{id}/routes',
      'POST /edges/tls',
    ]);

    // Add a file.
    t = Date.now();
    await writeYaml(path.join(edges, 'cache.yaml'), [tlsEdge('cache')]);
    s = await converged(daemon, t, ['https:web', 'tls:cache', 'tls:db']);
    expect(s.last_reconcile?.reason).toBe('file');
    expect(writesSince(t)).toEqual(['POST /edges/tls']);

    // Edit a file: a changed description and a new route.
    t = Date.now();
    const edited = httpsEdge('web', { description: 'web, edited' });
    edited.routes.push({
      match_type: 'path_prefix',
      match: '/api',
      backend: { backend_id: 'bkdhr_api' },
      compression: {},
    });
    await writeYaml(path.join(edges, 'web.yaml'), [edited]);
    await waitFor('the edited description live', async () => {
      const live = await liveState(client);
      const web = live.httpsEdges.find((e) => e.description === 'web, edited');
      return web !== undefined && web.routes.length === 2;
    });
    s = await waitForCycle(daemon, t, settled);
    expect(writesSince(t)).toEqual(['PATCH /edges/https/{id}', 'POST /edges/https/{id}/routes']);

    // Rename a file (an editor's save-by-rename, or a reorganisation): nothing to write.
    t = Date.now();
    await rename(path.join(edges, 'cache.yaml'), path.join(edges, 'cache-renamed.yml'));
    s = await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'converged');
    expect(writesSince(t)).toEqual([]);

    // Break a file: the set is invalid, nothing is written, /status names the file and line.
    t = Date.now();
    await writeFile(path.join(edges, 'db.yaml'), 'kind: TLSEdge\nname: db\nhostpots: []\n');
    s = await waitForCycle(daemon, t, (x) => x.last_reconcile?.result === 'invalid');
    expect(Object.keys(s.diagnostics_by_file)).toEqual(['db.yaml']);
    expect(s.diagnostics_by_file['db.yaml']?.[0]).toMatchObject({ line: 3, severity: 'error' });
    expect(s.ready).toBe(true);
    // At least one failed cycle: an editor or a loaded machine may deliver the write as two events.
    expect(s.consecutive_failures).toBeGreaterThanOrEqual(1);

    // A recursive alias is a located manifest error too (it used to overflow the stack and be
    // reported as an internal error), and a dangling link makes the set unknown, not empty.
    t = Date.now();
    await writeFile(path.join(edges, 'db.yaml'), 'kind: TLSEdge\nname: db\nhostports: &h [*h]\n');
    await symlink(path.join(edges, 'gone'), path.join(edges, 'team-b'));
    s = await waitForCycle(
      daemon,
      t,
      (x) =>
        x.last_reconcile?.result === 'invalid' &&
        x.diagnostics_by_file['db.yaml']?.[0]?.message.startsWith('recursive alias') === true,
    );
    expect(Object.keys(s.diagnostics_by_file).sort()).toEqual(['db.yaml', 'team-b']);
    expect(writesSince(t)).toEqual([]);
    await rm(path.join(edges, 'team-b'));

    // Remove it: the edge is deleted, and the failure is cleared.
    t = Date.now();
    await rm(path.join(edges, 'db.yaml'));
    s = await converged(daemon, t, ['https:web', 'tls:cache']);
    expect(writesSince(t)).toEqual(['DELETE /edges/tls/{id}']);
    expect(s.diagnostics_by_file).toEqual({});
    expect(s.last_error).toBeNull();
    expect(s.consecutive_failures).toBe(0);
    // No cycle ever failed for another reason than the broken file.
    const results = daemon
      .logLines()
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('reconcile '))
      .map((l) => l.result);
    // (`superseded`, neither a success nor a failure: a file read while it was being written,
    // or one that lost a resource, read again a debounce later before it is acted on.)
    expect(new Set(results.filter((r) => r !== 'superseded'))).toEqual(
      new Set(['changed', 'converged', 'invalid']),
    );
  });

  it('undoes an edit made directly through the API at the next resync', async () => {
    await writeYaml(path.join(edges, 'web.yaml'), [httpsEdge('web')]);
    await writeYaml(path.join(edges, 'db.yaml'), [tlsEdge('db')]);
    const daemon = await spawnDaemon('1s');
    await converged(daemon, 0, ['https:web', 'tls:db']);

    const live = await liveState(client);
    const web = live.httpsEdges.find((e) => e.description === 'web web');
    const db = live.tlsEdges.find((e) => e.description === 'tcp db');
    if (web === undefined || db === undefined) throw new Error('edges not found');
    const route = web.routes[0];
    if (route === undefined) throw new Error('route not found');

    // Out-of-band edits: a description, a module removed from a route, a module added to an edge.
    const t = Date.now();
    await client.updateHttpsEdge(web.id, { description: 'changed by hand' });
    await client.deleteModule({ kind: 'route', edgeId: web.id, id: route.id }, 'compression');
    await client.updateTlsEdge(db.id, { ip_restriction: { ip_policy_ids: ['ipp_byhand'] } });

    await waitFor(
      'the hand edits to be undone',
      async () => {
        const now = await liveState(client);
        const w = now.httpsEdges.find((e) => e.id === web.id);
        const d = now.tlsEdges.find((e) => e.id === db.id);
        return (
          w?.description === 'web web' &&
          w.routes[0]?.compression != null &&
          d !== undefined &&
          d.ip_restriction == null
        );
      },
      5000,
    );
    const undo = proxy.writes().filter((w) => w.at >= t);
    expect(undo.map((w) => w.method).sort()).toEqual(['DELETE', 'PATCH', 'PATCH']);
    // A resync did it: nothing else could have triggered a cycle.
    const line = await waitFor('the resync log line', () =>
      daemon.logLines().find((l) => l.msg === 'reconcile changed' && l.reason === 'resync'),
    );
    expect(line).toMatchObject({ writes: 3, result: 'changed' });
    // And the next resync finds nothing to do.
    await waitForCycle(daemon, Date.now(), (x) => x.last_reconcile?.result === 'converged', 5000);
  });
});
