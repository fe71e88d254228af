/**
 * An incremental load (the daemon's, after a file event: only the touched files read, the rules
 * across documents worked out for what they touch, the set patched) equals a fresh full load of
 * the same directory: the same DesiredSet and the same diagnostics, file:line:field and message,
 * after any sequence of edits, additions and removals of files (fast-check, fixed seed). The
 * documents are drawn from small pools of names, hostports, hosts and references, so that the
 * rules across documents (duplicate names, hostports, endpoint claims, natural keys, references
 * between kinds, secrets in their vaults) keep finding and losing conflicts.
 */
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCache } from '../../../src/manifest/build.js';
import { type LoadResult, loadManifests, touchManifests } from '../../../src/manifest/loader.js';

const NAMES = ['a', 'b', 'c'];
const HOSTS = ['one.example.com', 'two.example.com', 'ONE.example.com'];
const POLICIES = ['office', 'lab'];
const VAULTS = ['webhooks', 'other'];
const FILES = ['a.yaml', 'b.yaml', 'team/c.yaml', 'team/d.yml', 'z.yaml'];

const pick = <T>(list: readonly T[]) => fc.constantFrom(...list);

const tls = fc
  .record({ name: pick(NAMES), host: pick(HOSTS), description: fc.nat(3) })
  .map(
    (d) =>
      `kind: TLSEdge\nname: ${d.name}\ndescription: tls ${d.description}\nhostports: [${d.host}:443]\n`,
  );
const https = fc
  .record({ name: pick(NAMES), hosts: fc.uniqueArray(pick(HOSTS), { minLength: 1, maxLength: 2 }) })
  .map(
    (d) =>
      `kind: HTTPSEdge\nname: ${d.name}\nhostports: [${d.hosts.map((h) => `${h}:443`).join(', ')}]\nroutes:\n  - { match_type: path_prefix, match: /, backend: { backend_id: bkdhr_1 } }\n`,
  );
const endpoint = fc
  .record({
    name: pick(NAMES),
    host: pick(HOSTS),
    pooling: fc.boolean(),
    policy: pick(POLICIES),
    vault: pick(VAULTS),
    uses: fc.constantFrom('ips', 'secret'),
  })
  .map((d) => {
    const action =
      d.uses === 'ips'
        ? `{ type: restrict-ips, config: { enforce: true, ip_policies: [{ ref: ${d.policy} }] } }`
        : `{ type: verify-webhook, config: { provider: github, secret: "\${secrets.get('${d.vault}', 'hook')}" } }`;
    return `kind: CloudEndpoint\nname: ${d.name}\nurl: https://${d.host.toLowerCase()}\npooling_enabled: ${d.pooling}\ntraffic_policy:\n  on_http_request:\n    - actions:\n        - ${action}\n`;
  });
const ipPolicy = fc
  .record({ name: pick(POLICIES), absent: fc.boolean() })
  .map(
    (d) =>
      `kind: IPPolicy\nname: ${d.name}\n${d.absent ? 'ensure: absent\n' : ''}rules:\n  - { cidr: 203.0.113.0/24, action: allow }\n`,
  );
const domain = fc
  .record({ name: pick(NAMES), host: pick(HOSTS) })
  .map((d) => `kind: ReservedDomain\nname: domain-${d.name}\ndomain: ${d.host.toLowerCase()}\n`);
const vault = pick(VAULTS).map((name) => `kind: Vault\nname: ${name}\n`);
const secret = fc
  .record({ vault: pick(VAULTS), absent: fc.boolean() })
  .map(
    (d) =>
      `kind: Secret\nname: hook\nvault: ${d.vault}\n${d.absent ? 'ensure: absent\n' : 'value: { env: HOOK_SECRET }\n'}`,
  );
const broken = fc.constantFrom(
  'kind: TLSEdge\nname: broken\nhostpots: []\n',
  'kind: TLSEdge\nname: a\nhostports: [one.example.com:443]\nbogus: 1\n',
  'kind: [unclosed\n',
);

const documentArb = fc.oneof(
  { weight: 4, arbitrary: tls },
  { weight: 3, arbitrary: https },
  { weight: 3, arbitrary: endpoint },
  { weight: 2, arbitrary: ipPolicy },
  { weight: 2, arbitrary: domain },
  { weight: 1, arbitrary: vault },
  { weight: 1, arbitrary: secret },
  { weight: 1, arbitrary: broken },
);
const fileText = fc.array(documentArb, { maxLength: 3 }).map((docs) => docs.join('---\n'));

type Step = { file: string; text: string | undefined };
const step: fc.Arbitrary<Step> = fc.record({
  file: pick(FILES),
  // Undefined removes the file.
  text: fc.option(fileText, { nil: undefined, freq: 5 }),
});

const ENV = {
  HOOK_SECRET: 'hook-secret-value-1',
  EDGESYNC_SECRET_DIGEST_KEY: 'a-digest-key-of-at-least-32-characters!',
};

/** What a load says, as a reader of it would compare two loads. */
function outcome(result: LoadResult) {
  return {
    ok: result.ok,
    files: result.files,
    counts: result.counts,
    diagnostics: result.diagnostics,
    set: result.ok ? withDigests(result.set) : undefined,
  };
}

/**
 * The set with each write-only digester (a closure: two loads make two) replaced by the digests
 * it gives, for no writer and for one, which is what a reader of the set compares.
 */
function withDigests(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withDigests);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      typeof v === 'function' ? [v(undefined), v('usr_writer')] : withDigests(v),
    ]),
  );
}

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});

describe('incremental load', () => {
  it('equals a fresh full load after any sequence of file edits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 5 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (initial, edits) => {
          const dir = await mkdtemp(path.join(os.tmpdir(), 'edgesync-incremental-'));
          dirs.push(dir);
          const apply = async ({ file, text }: Step): Promise<string> => {
            const target = path.join(dir, ...file.split('/'));
            if (text === undefined) await unlink(target).catch(() => undefined);
            else {
              await mkdir(path.dirname(target), { recursive: true });
              await writeFile(target, text);
            }
            return target;
          };
          for (const s of initial) await apply(s);
          const cache = new FileCache();
          const options = { env: ENV, cache, incremental: true };
          // The first load through the cache reads everything.
          expect(outcome(await loadManifests(dir, options))).toEqual(
            outcome(await loadManifests(dir, { env: ENV })),
          );
          for (const s of edits) {
            touchManifests(cache, [await apply(s)]);
            const incremental = await loadManifests(dir, options);
            const fresh = await loadManifests(dir, { env: ENV });
            expect(outcome(incremental)).toEqual(outcome(fresh));
            // Only the touched file (and the ones with references or findings) was read again.
            expect(incremental.read.size).toBeLessThanOrEqual(fresh.read.size);
          }
        },
      ),
      { seed: 20261129, numRuns: 150 },
    );
  }, 120_000);
});
