/**
 * The image builds: no Docker daemon is available to the suite, so this test does what `docker
 * build` would do with the repository as its context. It filters the working tree through
 * .dockerignore (with a library that implements Docker's matching rules), copies what is left
 * into a temporary context, then plays the Dockerfile's stages instruction by instruction: WORKDIR,
 * ENV, COPY (from the context or from an earlier stage) and RUN, each stage in its own directory
 * standing in for the image's root. npm installs offline, from the npm cache that `npm ci`
 * filled. The assembled runtime stage then runs as the image's non-root user over files that user
 * cannot write, as a read-only root would have it.
 *
 * One RUN is not played again: the build stage's full install (`npm ci --ignore-scripts`) of the
 * same lockfile is the install this suite runs on (CI's `npm ci`), so the stage links the
 * repository's node_modules instead of spending a minute of the suite rebuilding it. The bundle
 * that follows does run, on the filtered context, so a file the build needs and .dockerignore
 * drops still fails here. The runtime stage's production install is played as written.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dockerignoreModule from '@balena/dockerignore';
import { Copy, DockerfileParser, type Instruction } from 'dockerfile-ast';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerChild } from '../../../bench/harness.js';

// The package is CommonJS with a `default` property on its export; Node's interop hands us the
// export itself.
const dockerignore = dockerignoreModule.default;
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const NPM_CACHE = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();

/** The paths of the build context, as `docker build .` would send them (files, relative). */
function contextFiles(): string[] {
  const rules = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8');
  const ig = dockerignore({ ignorecase: false }).add(rules);
  // With no `!` exception, an excluded directory can be skipped whole, as Docker does.
  const prune = !rules.split('\n').some((line) => line.trim().startsWith('!'));
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!(prune && ig.ignores(child))) walk(child);
      } else if (!ig.ignores(child)) files.push(child);
    }
  };
  walk('');
  return files;
}

interface Stage {
  name: string;
  instructions: Instruction[];
}

function stages(): Stage[] {
  const file = DockerfileParser.parse(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
  const out: Stage[] = [];
  for (const ins of file.getInstructions()) {
    if (ins.getKeyword() === 'FROM') {
      out.push({ name: ins.getArguments().at(-1)?.getValue() ?? '', instructions: [] });
    } else out.at(-1)?.instructions.push(ins);
  }
  return out;
}

/** An image's root, played by a directory: absolute paths in the Dockerfile land under it. */
class StageRoot {
  workdir = '/';
  readonly env: Record<string, string> = {};
  constructor(readonly dir: string) {}
  resolve(p: string): string {
    return path.join(this.dir, path.posix.resolve(this.workdir, p));
  }
}

function copy(root: StageRoot, from: string, args: string[]): void {
  const dest = args.at(-1) ?? '';
  const sources = args.slice(0, -1);
  for (const src of sources) {
    const full = path.join(from, src);
    const into = dest.endsWith('/') && statSync(full).isFile();
    const target = into ? path.join(root.resolve(dest), path.basename(src)) : root.resolve(dest);
    cpSync(full, target, { recursive: true });
  }
}

function run(root: StageRoot, command: string, cache: string): void {
  const cwd = root.resolve('.');
  mkdirSync(cwd, { recursive: true });
  const env = { ...process.env, ...root.env, npm_config_offline: 'true', npm_config_cache: cache };
  const r = spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`RUN ${command} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
}

function play(stage: Stage, root: StageRoot, context: string, built: Map<string, StageRoot>) {
  for (const ins of stage.instructions) {
    const args = ins.getArguments().map((a) => a.getValue());
    switch (ins.getKeyword()) {
      case 'WORKDIR':
        root.workdir = path.posix.resolve(root.workdir, args[0] ?? '.');
        mkdirSync(root.resolve('.'), { recursive: true });
        break;
      case 'ENV':
        for (const pair of args) {
          const [key = '', value = ''] = pair.split('=');
          root.env[key] = value;
        }
        break;
      case 'COPY': {
        const fromStage = ins instanceof Copy ? ins.getFromFlag()?.getValue() : undefined;
        const from = fromStage == null ? context : built.get(fromStage)?.dir;
        if (from === undefined) throw new Error(`COPY --from=${fromStage}: no such stage`);
        copy(root, from, args);
        break;
      }
      case 'RUN': {
        if (isSuiteInstall(root, args.join(' '))) {
          symlinkSync(path.join(ROOT, 'node_modules'), root.resolve('node_modules'), 'dir');
          break;
        }
        // An absolute path in a command is a path in the image: under the stage's root here,
        // never on this machine.
        const command = args.map((a) => (a.startsWith('/') ? root.resolve(a) : a)).join(' ');
        run(root, command, stageCache(root));
        break;
      }
    }
  }
}

/** The build stage's full install of the repository's own lockfile: the suite's install. */
function isSuiteInstall(root: StageRoot, command: string): boolean {
  const lock = (dir: string) => readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
  return (
    command === 'npm ci --ignore-scripts' &&
    existsSync(root.resolve('package-lock.json')) &&
    lock(root.resolve('.')) === lock(ROOT)
  );
}

/** `npm cache clean` in the runtime stage must not empty the machine's cache: the stages use a copy. */
function stageCache(root: StageRoot): string {
  const cache = path.join(root.dir, '..', 'npm-cache');
  if (!existsSync(cache)) cpSync(NPM_CACHE, cache, { recursive: true });
  return cache;
}

let tmp: string;
const built = new Map<string, StageRoot>();

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'edgesync-docker-'));
  chmodSync(tmp, 0o755);
  const context = path.join(tmp, 'context');
  for (const file of contextFiles()) {
    cpSync(path.join(ROOT, file), path.join(context, file), { recursive: true });
  }
  for (const stage of stages()) {
    const root = new StageRoot(path.join(tmp, `stage-${stage.name}`));
    play(stage, root, context, built);
    built.set(stage.name, root);
  }
}, 600_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 300_000);

describe('the Dockerfile against the .dockerignore-filtered context', () => {
  it('leaves out what the image must not carry', () => {
    const files = contextFiles();
    expect(files.some((f) => f.startsWith('node_modules/') || f.startsWith('.git/'))).toBe(false);
    expect(files).toContain('package-lock.json');
  });

  it('builds the runtime stage, which runs as a non-root user over files it cannot write', async () => {
    const runtime = built.get('runtime');
    expect(runtime).toBeDefined();
    if (!runtime) return;
    const user = stages()
      .at(-1)
      ?.instructions.find((i) => i.getKeyword() === 'USER')
      ?.getArguments()[0]
      ?.getValue();
    expect(user).toBe('1000:1000');
    const state = path.join(tmp, 'state');
    cpSync(path.join(ROOT, 'config-examples', 'edges'), path.join(state, 'manifests'), {
      recursive: true,
    });
    const asUser = process.getuid?.() === 0 ? { uid: 1000, gid: 1000 } : {};
    if (asUser.uid !== undefined) spawnSync('chown', ['-R', '1000:1000', state]);
    const node = [runtime.resolve('/app/bin/edgesync.js')];
    const opts = {
      cwd: state,
      env: { PATH: process.env.PATH ?? '', HOME: state, ...runtime.env },
      ...asUser,
    };
    const validate = spawnSync('node', [...node, 'validate', 'manifests'], {
      ...opts,
      encoding: 'utf8',
    });
    expect(validate.stderr).toMatch(/manifests valid/);
    expect(validate.status).toBe(0);
    const server = await startServerChild({ command: ['node', ...node], ...opts });
    try {
      const auth = ['--api-url', server.url, '--api-key', server.apiKey];
      const plan = spawnSync('node', [...node, 'plan', 'manifests', ...auth], {
        ...opts,
        encoding: 'utf8',
      });
      expect(plan.status, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/create/);
    } finally {
      await server.stop();
    }
  });
});
