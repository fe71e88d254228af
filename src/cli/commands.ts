/**
 * The command table: ./command-table.ts, and `completion`, which is generated from that table
 * (and so cannot be in it without an import loop).
 */
import { commandTable } from './command-table.js';
import type { CommandModule } from './context.js';

export const commands: Record<string, () => Promise<CommandModule>> = {
  ...commandTable,
  completion: () => import('./commands/completion.js'),
};
