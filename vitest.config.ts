import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The files of a tier that replace a module (`vi.mock`) or the environment (`vi.stubEnv`): a
 * mock holds only in a fresh module graph, so these keep their own worker each; every other file
 * of the tier shares one.
 */
function filesThatMock(tier: string): string[] {
  const dir = path.join(import.meta.dirname, 'test', tier);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => /\bvi\.(mock|doMock|stubEnv)\(/.test(readFileSync(path.join(dir, f), 'utf8')))
    .map((f) => `test/${tier}/${f.split(path.sep).join('/')}`);
}

const mocking = filesThatMock('unit');
const integrationMocking = filesThatMock('integration');

/**
 * Three tiers, each a vitest project (`vitest run --project 'unit*'`, `npm run test:unit`):
 * - unit: pure code, in-process; no module keeps state between files that another reads, so the
 *   files share their workers (`isolate: false`) instead of paying a fresh process each; those
 *   that mock a module run apart, isolated (`unit-isolated`).
 * - integration: the real local server over HTTP on loopback and the real file system,
 *   in-process. Each file starts its own servers on port 0 and its own temp directories and
 *   leaves no process state behind, so these share workers too (`isolate: false`: a fresh
 *   module graph per file cost more than the tests of most files); the few that mock a module or
 *   stub the environment run isolated (`integration-isolated`).
 * - e2e: the compiled CLI as child processes (server, `run` daemons, killed applies), the packed
 *   package installed, the container image's build replayed. These wait on other processes, so
 *   they overlap the CPU-bound files rather than queue behind them.
 */
export const config = defineConfig({
  test: {
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on a 2-core machine, where the
    // end-to-end files spend most of their time waiting for their child processes. One per core.
    maxWorkers: Math.max(2, availableParallelism()),
    // Every property test runs from a fixed seed (FC_SEED overrides it to explore).
    setupFiles: ['test/helpers/seed.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: mocking,
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'unit-isolated', include: mocking },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: integrationMocking,
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'integration-isolated', include: integrationMocking },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] },
      },
    ],
  },
});

// vitest loads the config's default export; this is the one place a default export is needed.
// biome-ignore lint/style/noDefaultExport: required by vitest
export default config;
