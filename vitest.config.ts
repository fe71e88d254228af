import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Every property test runs from a fixed seed (FC_SEED overrides it to explore).
    setupFiles: ['test/helpers/seed.ts'],
  },
});

// vitest loads the config's default export; this is the one place a default export is needed.
// biome-ignore lint/style/noDefaultExport: required by vitest
export default config;
