/**
 * Where `migrate` and `import` write, and what they leave when a write fails: every path
 * written is checked (a symbolic link inside `--out` into the source directory is refused, the
 * source untouched); a full disk (an injected ENOSPC, never a filled disk) leaves the output
 * directory as it was and says "disk full"; and `migrate --exclude` followed by the documented
 * next step (applying the output) keeps the edges it left out. Real file system, and the local
 * server over HTTP for the apply and import steps.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { nodeWriteFs, type WriteFs } from '../../../src/cli/write-set.js';
import { Capture } from '../../helpers/capture.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir } from '../apply/helpers.js';

const WEB = 'bkdhr_2OOHLE6ESrthOmxYlInonfwYtzS';

const SHOP = `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: ${WEB} }
`;
const TOOLS = `# staff tools: stay on their edge for now
kind: TLSEdge
name: tools
hostports: [tools.example.com:443]
`;
const BOTS = 'kind: BotUser\nname: ci\n';

/** `edgesync ARGV` in-process with an injected write function. */
async function cli(argv: string[], env: Record<string, string>, writeFs?: WriteFs) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main({
    argv,
    stdout,
    stderr,
    env,
    cwd: process.cwd(),
    signal: new AbortController().signal,
    writeFs,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Node's writes, but the `n`th file write (1-based) fails as a full disk does. */
function fullDiskAt(n: number): WriteFs {
  let writes = 0;
  return {
    ...nodeWriteFs,
    writeFile: async (file, text) => {
      writes += 1;
      if (writes >= n) {
        throw Object.assign(new Error(`ENOSPC: no space left on device, open '${file}'`), {
          code: 'ENOSPC',
          errno: -28,
          syscall: 'open',
        });
      }
      await nodeWriteFs.writeFile(file, text);
    },
  };
}

/** Every entry under `base` (hidden ones too) with the digest of each file. */
async function tree(base: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(base, { recursive: true, withFileTypes: true })) {
    const full = path.join(e.parentPath, e.name);
    const rel = path.relative(base, full);
    if (e.isSymbolicLink()) out[rel] = 'link';
    else if (e.isDirectory()) out[rel] = 'dir';
    else
      out[rel] = createHash('sha256')
        .update(await readFile(full))
        .digest('hex');
  }
  return out;
}

let tmp: Awaited<ReturnType<typeof tempDir>>;
let dir: string;
let out: string;

beforeEach(async () => {
  tmp = await tempDir('edgesync-output-paths-');
  dir = path.join(tmp.dir, 'edges');
  out = path.join(tmp.dir, 'out');
  await mkdir(path.join(dir, 'internal'), { recursive: true });
  await writeFile(path.join(dir, 'shop.yaml'), SHOP);
  await writeFile(path.join(dir, 'bots.yaml'), BOTS);
  await writeFile(path.join(dir, 'internal', 'tools.yaml'), TOOLS);
});
afterEach(async () => {
  await tmp.cleanup();
});

// The TLS edge has no backend (a warning): acknowledged, so that every file is written.
const migrateArgs = () => [
  'migrate',
  dir,
  '--out',
  out,
  '--backend',
  `${WEB}=https://web.internal`,
  '--allow-lossy',
];

describe('migrate: every path written is checked', () => {
  it('a symbolic link inside --out into the source directory is refused; the source is untouched', async () => {
    // out/internal -> edges/internal: out/internal/tools.yaml would replace the source's.
    await mkdir(out);
    await symlink(path.join(dir, 'internal'), path.join(out, 'internal'));
    const before = await tree(dir);
    const run = await cli(migrateArgs(), {});
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(
      `refusing to write internal/tools.yaml: ${out}/internal resolves to ${path.join(dir, 'internal')}, inside the source directory ${dir} (a symbolic link): nothing was written`,
    );
    expect(await tree(dir)).toEqual(before);
    expect(await readFile(path.join(dir, 'internal', 'tools.yaml'), 'utf8')).toBe(TOOLS);
    // Nothing else was written either: all or none.
    expect(await tree(out)).toEqual({ internal: 'link' });
  });

  it('a link leading out of --out elsewhere is refused too', async () => {
    const elsewhere = path.join(tmp.dir, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(out);
    await symlink(elsewhere, path.join(out, 'internal'));
    const run = await cli(migrateArgs(), {});
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(`resolves to ${elsewhere}, outside ${out}`);
    expect(await readdir(elsewhere)).toEqual([]);
  });
});

describe('a full disk leaves the output as it was, and says so', () => {
  it('migrate: no partial set, no staging left, "disk full" plainly', async () => {
    const run = await cli(migrateArgs(), {}, fullDiskAt(2));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^edgesync migrate: disk full: cannot write .*: nothing was written to /m,
    );
    expect(run.stderr).not.toContain('internal error');
    // --out did not exist: it does not now.
    await expect(readdir(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('migrate over an earlier output: a failed move puts every replaced file back', async () => {
    expect((await cli(migrateArgs(), {})).code).toBe(0);
    await writeFile(
      path.join(dir, 'shop.yaml'),
      SHOP.replace('shop.example.com', 'shop2.example.com'),
    );
    const before = await tree(out);
    let renames = 0;
    const failing: WriteFs = {
      ...nodeWriteFs,
      rename: async (from, to) => {
        renames += 1;
        if (renames === 2) {
          throw Object.assign(new Error('ENOSPC: no space left on device, rename'), {
            code: 'ENOSPC',
          });
        }
        await nodeWriteFs.rename(from, to);
      },
    };
    const run = await cli(migrateArgs(), {}, failing);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('disk full');
    expect(await tree(out)).toEqual(before);
  });

  it('main says "disk full" for an ENOSPC no command wrapped', async () => {
    // The plan file's write is a plain writeFile: ENOSPC there used to be an internal error.
    const { knownSystemError, DiskFullError } = await import('../../../src/errors.js');
    const err = knownSystemError(
      Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
    );
    expect(err).toBeInstanceOf(DiskFullError);
    expect((err as Error).message).toBe('disk full: ENOSPC: no space left on device, write');
  });
});

describe('with the local server', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    env = { ...apiEnv(server.url, server.apiKey), EDGESYNC_OWNER: 'web' };
  });
  afterAll(async () => {
    await server.close();
  });

  it('import: a full disk leaves no partial set (a fresh directory, and one with --force)', async () => {
    const applied = await runCli(['apply', dir, '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const target = path.join(tmp.dir, 'imported');
    const first = await cli(['import', '--out', target], env, fullDiskAt(2));
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(
      /^edgesync import: disk full: cannot write .*: nothing was written/m,
    );
    expect(first.stderr).not.toContain('internal error');
    await expect(readdir(target)).rejects.toMatchObject({ code: 'ENOENT' });

    expect((await cli(['import', '--out', target], env)).code).toBe(0);
    expect(Object.keys(await tree(target)).sort()).toEqual([
      '.edgesync-owner',
      'bot-ci.yaml',
      'https-shop.yaml',
      'tls-tools.yaml',
    ]);
    // Edited since: --force would replace them all, and a full disk must leave every one.
    await writeFile(path.join(target, 'https-shop.yaml'), '# edited\n');
    await writeFile(path.join(target, 'tls-tools.yaml'), '# edited too\n');
    const before = await tree(target);
    const forced = await cli(['import', '--out', target, '--force'], env, fullDiskAt(3));
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain('disk full');
    expect(await tree(target)).toEqual(before);
  });

  it('migrate --exclude, then applying the output as documented, keeps the edges left out', async () => {
    const applied = await runCli(['apply', dir, '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    const toolsId = (await snapshotOf(server.url, server.apiKey)).tlsEdges.find((e) =>
      e.hostports.includes('tools.example.com:443'),
    )?.id;
    expect(toolsId).toBeDefined();

    const migrated = await cli([...migrateArgs(), '--exclude', 'internal/**'], {});
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stderr).toContain('1 excluded file(s) copied unchanged, not migrated');
    // Copied as written, comments and all.
    expect(await readFile(path.join(out, 'internal', 'tools.yaml'), 'utf8')).toBe(TOOLS);

    const cutover = await runCli(['apply', out, '--yes'], { env });
    expect(cutover.code, cutover.stderr).toBe(0);
    const live = await snapshotOf(server.url, server.apiKey);
    expect(live.tlsEdges.map((e) => e.id)).toEqual([toolsId]);
    expect(live.httpsEdges).toEqual([]);
    expect((live.cloudEndpoints ?? []).map((e) => e.url)).toEqual(['https://shop.example.com']);
  });
});
