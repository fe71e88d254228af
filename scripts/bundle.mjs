/**
 * Bundles the CLI from its TypeScript sources (src/cli/main.ts) into dist/bundle/, which
 * bin/edgesync.js runs. esbuild strips the types itself: the bundle does not wait for `tsc`, and
 * the container image's build stage runs this script alone (`npm run bundle`), since type checking
 * is the CI's job, not the image's.
 *
 * Why: a short command such as `edgesync plan` spent about a sixth of its CPU loading modules,
 * one file at a time (resolution, reading, compiling 300 files of ours and of our dependencies).
 * One bundle per command, split at the commands' lazy imports, loads in about half the time.
 * See docs/decisions/0003-one-bundle-for-the-cli.md.
 *
 * Only the dependencies on every command's path are bundled (BUNDLED). The others stay in
 * node_modules: pino finds its transports by file name, and the daemon's own dependencies
 * (Kubernetes Leases, metrics, the file watcher) are loaded once by a long-running process.
 *
 * The benchmark's plan child (bench/plan-child.ts) is bundled the same way into
 * dist/bench-bundle/, so the plan benchmark measures the code the command runs.
 */
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const BUNDLED = new Set(['zod', 'yaml', 'picomatch', 'fast-deep-equal', 'undici']);

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies).filter((name) => !BUNDLED.has(name));
for (const name of BUNDLED) {
  if (!(name in pkg.dependencies)) throw new Error(`bundle.mjs: ${name} is not a dependency`);
}

/**
 * `yaml` ships two builds of the same code: CommonJS for Node (its `node` export condition) and
 * ESM for everything else (`default`). The Node build reads `process.env.LOG_TOKENS` for every
 * token the parser sees (a debugging switch): a call into the environment each time, 2.7 million
 * of them for the 10,000-edge corpus, about 0.7 s of CPU (a tenth of parsing it). The ESM build is the same parser without that switch (and
 * warns through `console.warn`, not `process.emitWarning`; the manifest reader turns yaml's
 * warnings off). The bundle takes it.
 */
const yamlDefaultBuild = {
  name: 'yaml-default-build',
  setup(b) {
    const requireHere = createRequire(import.meta.url);
    const pkgFile = requireHere.resolve('yaml/package.json');
    const entry = JSON.parse(readFileSync(pkgFile, 'utf8')).exports['.'].default;
    if (typeof entry !== 'string') throw new Error('bundle.mjs: yaml has no default export');
    const file = path.join(path.dirname(pkgFile), entry);
    b.onResolve({ filter: /^yaml$/ }, () => ({ path: file }));
  },
};

const common = {
  plugins: [yamlDefaultBuild],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  splitting: true,
  external,
  sourcemap: 'linked',
  logLevel: 'warning',
  // In an ESM bundle, a CommonJS module that `require`s one of Node's own modules needs a real
  // `require` (esbuild's stand-in throws). None of the bundled dependencies does today (undici
  // did); this keeps the next one from failing only at run time.
  banner: {
    js: "import { createRequire as __edgesyncCreateRequire } from 'node:module'; const require = __edgesyncCreateRequire(import.meta.url);",
  },
};

// Chunk names carry a content hash: an earlier build's chunks must not pile up beside these.
for (const [entry, outdir] of [
  ['src/cli/main.ts', 'dist/bundle'],
  ['bench/plan-child.ts', 'dist/bench-bundle'],
]) {
  rmSync(outdir, { recursive: true, force: true });
  await build({ ...common, entryPoints: [entry], outdir });
}
