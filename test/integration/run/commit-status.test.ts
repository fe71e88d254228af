/**
 * `--notify github=URL` and `--notify gitlab=URL`: `edgesync run` (in-process, against the local
 * server) posts a commit status on the revision each cycle read, to loopback fakes of GitHub's
 * and GitLab's commit-status APIs: success for an applied revision, failure for an invalid one,
 * once per revision and outcome, with the host's token in its header and no secret in the body;
 * an event receiver beside them keeps its own format.
 */
import { once } from 'node:events';
import { mkdir, rename, symlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../bench/harness.js';
import { startDaemon, stopDaemons } from '../../helpers/daemon.js';
import { startTestServer } from '../../helpers/server.js';
import { tempDir, tlsEdge, writeYaml } from './helpers.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

/** A loopback fake of a Git host's commit-status endpoint: answers 201, keeps every request. */
async function fakeHost(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString('utf8');
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
      });
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const SHA_A = 'a'.repeat(40);
const SHA_B = '0123456789abcdef0123456789abcdef01234567';
const GITHUB_TOKEN = 'ghp_fake-token-for-the-test-0123';
const GITLAB_TOKEN = 'glpat-fake-token-for-the-test-0123';

let api: Awaited<ReturnType<typeof startTestServer>>;
let github: Awaited<ReturnType<typeof fakeHost>>;
let gitlab: Awaited<ReturnType<typeof fakeHost>>;
let events: Awaited<ReturnType<typeof fakeHost>>;
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  api = await startTestServer();
  [github, gitlab, events] = await Promise.all([fakeHost(), fakeHost(), fakeHost()]);
  tmp = await tempDir();
});
afterEach(async () => {
  await stopDaemons();
  await Promise.all([github.close(), gitlab.close(), events.close(), api.close()]);
  await tmp.cleanup();
});

/** A git-sync checkout: `git/current` -> `git/<sha>`, the manifests under `edges/`. */
async function publish(sha: string, docs: Record<string, unknown>[]): Promise<void> {
  await writeYaml(path.join(tmp.dir, 'git', sha, 'edges', 'tcp.yaml'), docs);
  const link = path.join(tmp.dir, 'git', 'current');
  await symlink(sha, `${link}.new`);
  await rename(`${link}.new`, link);
}

describe('commit statuses', () => {
  it('posts success and failure to GitHub and GitLab for the revision each cycle read', async () => {
    await mkdir(path.join(tmp.dir, 'git'), { recursive: true });
    await publish(SHA_A, [tlsEdge('db')]);
    const daemon = await startDaemon({
      args: [
        'git/current/edges',
        '--interval',
        '1h',
        '--notify',
        `github=${github.url}/repos/acme/edges`,
        '--notify',
        `gitlab=${gitlab.url}/api/v4/projects/42/`,
        '--notify',
        `slack=${events.url}/hooks/T0/B0/secret-path`,
      ],
      cwd: tmp.dir,
      env: {
        EDGESYNC_API_URL: api.url,
        EDGESYNC_API_KEY: api.apiKey,
        EDGESYNC_OWNER: 'status-test',
        EDGESYNC_GITHUB_TOKEN: GITHUB_TOKEN,
        EDGESYNC_GITLAB_TOKEN: GITLAB_TOKEN,
      },
    });
    await waitFor('the first statuses', () =>
      github.seen.length >= 1 && gitlab.seen.length >= 1 ? true : undefined,
    );
    expect(github.seen[0]).toMatchObject({
      method: 'POST',
      url: `/repos/acme/edges/statuses/${SHA_A}`,
      body: {
        state: 'success',
        description: 'applied: 1 created, 0 updated, 0 deleted (1 write)',
        context: 'edgesync',
      },
    });
    expect(github.seen[0]?.headers.authorization).toBe(`Bearer ${GITHUB_TOKEN}`);
    expect(gitlab.seen[0]).toMatchObject({
      method: 'POST',
      url: `/api/v4/projects/42/statuses/${SHA_A}`,
      body: { state: 'success', name: 'edgesync' },
    });
    expect(gitlab.seen[0]?.headers['private-token']).toBe(GITLAB_TOKEN);

    // A resync that finds the revision the same says nothing new.
    await fetch(`${daemon.base}/-/reconcile`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    await waitFor('the resync', async () =>
      (await daemon.status()).last_reconcile?.reason === 'webhook' ? true : undefined,
    );
    await waitFor('a converged status', () => (github.seen.length >= 2 ? true : undefined));
    expect(github.seen[1]?.body).toMatchObject({
      state: 'success',
      description: 'in sync: nothing to change',
    });

    // The next revision is invalid: failure on it, GitLab's word for it.
    await publish(SHA_B, [{ ...tlsEdge('db'), name: 'Not A Name' }]);
    await waitFor('the failure', () =>
      gitlab.seen.some((s) => s.url.endsWith(SHA_B)) ? true : undefined,
    );
    const failed = gitlab.seen.find((s) => s.url.endsWith(SHA_B));
    expect(failed?.body).toEqual({
      state: 'failed',
      description: 'invalid manifests: 1 error ("edgesync status" lists them)',
      name: 'edgesync',
    });
    await waitFor('GitHub too', () =>
      github.seen.some((s) => s.url.endsWith(SHA_B)) ? true : undefined,
    );
    expect(github.seen.find((s) => s.url.endsWith(SHA_B))?.body.state).toBe('failure');

    // Each receiver its own format: the Slack one heard the events, as Slack bodies.
    expect(events.seen.length).toBeGreaterThan(0);
    for (const s of events.seen) expect(Object.keys(s.body)).toEqual(['text']);
    // No token in any body, nor the webhook's path in the log.
    for (const s of [...github.seen, ...gitlab.seen, ...events.seen]) {
      expect(JSON.stringify(s.body)).not.toMatch(/fake-token/);
      expect(String(s.body.description ?? '').length).toBeLessThanOrEqual(140);
    }
    expect(daemon.stdout()).not.toContain('secret-path');
    expect(daemon.stdout()).not.toContain('fake-token');
  });

  it('a Git host receiver without its token is refused at start', async () => {
    await mkdir(path.join(tmp.dir, 'edges'), { recursive: true });
    const started = startDaemon({
      args: ['edges', '--notify', `github=${github.url}/repos/acme/edges`],
      cwd: tmp.dir,
      env: { EDGESYNC_API_URL: api.url, EDGESYNC_API_KEY: api.apiKey, EDGESYNC_OWNER: 'x' },
      timeoutMs: 10_000,
    });
    await expect(started).rejects.toThrow(
      /set EDGESYNC_GITHUB_TOKEN to a token that may post commit statuses/,
    );
  });
});
