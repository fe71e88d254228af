/**
 * The command table. Each command lives in its own module under `commands/` and is imported
 * lazily, so `edgesync validate` never loads the HTTP server and start-up stays fast.
 */
import type { CommandModule } from './context.js';

export const commands: Record<string, () => Promise<CommandModule>> = {
  run: () => import('./commands/run.js'),
  server: () => import('./commands/server.js'),
  validate: () => import('./commands/validate.js'),
  plan: () => import('./commands/plan.js'),
  schema: () => import('./commands/schema.js'),
  apply: () => import('./commands/apply.js'),
  import: () => import('./commands/import.js'),
  release: () => import('./commands/release.js'),
  migrate: () => import('./commands/migrate.js'),
  test: () => import('./commands/test.js'),
};
