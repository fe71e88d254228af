/**
 * The command table. Each command lives in its own module under `commands/` and is imported
 * lazily, so `edgesync validate` never loads the HTTP server and start-up stays fast.
 */
import type { CommandModule } from './context.js';

export const commands: Record<string, () => Promise<CommandModule>> = {
  server: () => import('./commands/server.js'),
  validate: () => import('./commands/validate.js'),
  schema: () => import('./commands/schema.js'),
};
