import { defineConfig } from 'vitest/config';

/**
 * Three tiers, each a vitest project (`vitest run --project unit`, `npm run test:unit`):
 * - unit: pure code, in-process; no module keeps state between files that another reads, so the
 *   files share their workers (`isolate: false`) instead of paying a fresh process each.
 * - integration: the real local server over HTTP on loopback and the real file system, in-process.
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
    // Every property test runs from a fixed seed (FC_SEED overrides it to explore).
    setupFiles: ['test/helpers/seed.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'] },
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
