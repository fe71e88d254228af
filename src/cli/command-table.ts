/**
 * Every command but `completion`, each in its own module under `commands/`, imported lazily so
 * that `edgesync validate` never loads the HTTP server and start-up stays fast. `completion`
 * reads this table (its own entry is added in ./commands.ts), so that no import loops back.
 */
import type { CommandModule } from './context.js';
import type { CommandName } from './flag-table.js';

export const commandTable: Record<
  Exclude<CommandName, 'completion'>,
  () => Promise<CommandModule>
> = {
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
  status: () => import('./commands/status.js'),
  reconcile: () => import('./commands/reconcile.js'),
  suspend: () => import('./commands/suspend.js'),
  resume: () => import('./commands/resume.js'),
};
