/**
 * The write owner is chosen on purpose: against a configured API, apply, run (enforce) and
 * release refuse without one (exit 64, saying how to set one); --owner, EDGESYNC_OWNER and
 * .edgesync-owner in the manifest directory each choose it, in that order; plans show it.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseStoredMetadata } from '../../../src/manifest/metadata.js';
import { startTestServer, writesAt } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir, writeManifests } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

let server: Server;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;
/** A configured API, and no owner anywhere. */
let noOwner: Record<string, string | undefined>;

beforeEach(async () => {
  server = await startTestServer();
  tmp = await tempDir('edgesync-owner-');
  dir = path.join(tmp.dir, 'edges');
  await writeManifests(dir, [{ kind: 'TLSEdge', name: 'db', hostports: ['db.example.com:443'] }]);
  noOwner = { ...apiEnv(server.url, server.apiKey), EDGESYNC_OWNER: undefined };
});
afterEach(async () => {
  await server.close();
  await tmp.cleanup();
});

async function liveOwners(): Promise<string[]> {
  const live = await snapshotOf(server.url, server.apiKey);
  return live.tlsEdges.map((e) => parseStoredMetadata(e.metadata)?.owner ?? '(none)');
}

const HOW_TO = /--owner ID.*EDGESYNC_OWNER=ID.*\.edgesync-owner/s;

describe('without an owner against a configured API', () => {
  it.each([
    ['apply', ['apply', '--yes']],
    ['run (enforce)', ['run', '--listen', '127.0.0.1:0']],
    ['plan --out', ['plan', '--out', 'plan.json']],
  ])('%s refuses with exit 64, saying how to choose one; nothing is written', async (_n, argv) => {
    const run = await runCli([...argv, dir], { env: noOwner, cwd: tmp.dir });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(HOW_TO);
    expect(run.stderr).toMatch(/each other's edges/);
    expect(writesAt(server)).toBe(0);
  });

  it('release refuses too (its owner file is in $EDGESYNC_DIR); --dry-run does not', async () => {
    const env = { ...noOwner, EDGESYNC_DIR: dir };
    const refused = await runCli(['release', 'TLSEdge/db'], { env });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(HOW_TO);
    expect(refused.stderr).toContain(path.join(dir, '.edgesync-owner'));
    const dry = await runCli(['release', '--dry-run', 'TLSEdge/db'], { env });
    expect(dry.code).toBe(1); // nothing of the default owner's to release, but no refusal
    expect(dry.stderr).not.toMatch(HOW_TO);
  });

  it('plan still works, as the default owner, with a note that apply would refuse', async () => {
    const run = await runCli(['plan', dir], { env: noOwner });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('(owner "default")');
    expect(run.stderr).toMatch(/no owner chosen.*apply refuses/);
  });
});

describe('choosing the owner', () => {
  it.each([
    ['--owner', ['--owner', 'from-flag'], {}, undefined, 'from-flag'],
    ['EDGESYNC_OWNER', [], { EDGESYNC_OWNER: 'from-env' }, undefined, 'from-env'],
    ['.edgesync-owner', [], {}, 'from-file\n', 'from-file'],
    ['--owner over the rest', ['--owner', 'flag'], { EDGESYNC_OWNER: 'env' }, 'file', 'flag'],
    ['EDGESYNC_OWNER over the file', [], { EDGESYNC_OWNER: 'env' }, 'file', 'env'],
  ])('%s', async (_n, flags, env, file, expected) => {
    if (file !== undefined) await writeFile(path.join(dir, '.edgesync-owner'), file);
    const run = await runCli(['apply', '--yes', ...flags, dir], { env: { ...noOwner, ...env } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`(owner "${expected}")`);
    expect(await liveOwners()).toEqual([expected]);
  });

  it.each([
    ['bad owner!', /\.edgesync-owner:1: invalid owner id "bad owner!"/],
    ['', /\.edgesync-owner:1: invalid owner id ""/],
  ])('refuses an invalid owner file %j, naming it (exit 64)', async (content, message) => {
    await writeFile(path.join(dir, '.edgesync-owner'), content);
    const run = await runCli(['apply', '--yes', dir], { env: noOwner });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(message);
    expect(writesAt(server)).toBe(0);
  });

  it('refuses an invalid EDGESYNC_OWNER, naming it', async () => {
    const run = await runCli(['apply', '--yes', dir], {
      env: { ...noOwner, EDGESYNC_OWNER: '-x-' },
    });
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(/EDGESYNC_OWNER: invalid owner id "-x-"/);
  });
});

describe('the plan shows the owner', () => {
  it.each([
    ['text', [], /^edgesync will perform the following actions \(owner "team-a"\):/],
    ['json', ['--output', 'json'], /"owner": "team-a"/],
    ['markdown', ['--output', 'markdown'], /^#### edgesync plan \(owner `team-a`\)/],
  ])('%s', async (_n, flags, shown) => {
    await writeFile(path.join(dir, '.edgesync-owner'), 'team-a\n');
    const run = await runCli(['plan', ...flags, dir], { env: noOwner });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(shown);
    expect(run.stderr).not.toMatch(/no owner chosen/);
  });

  it('with no changes too', async () => {
    const env = { ...noOwner, EDGESYNC_OWNER: 'team-b' };
    expect((await runCli(['apply', '--yes', dir], { env })).code).toBe(0);
    const run = await runCli(['plan', dir], { env });
    expect(run.stdout).toBe(
      'edgesync plan for owner "team-b":\n\nNo changes. Live state matches the manifests.\n',
    );
  });
});
