import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph } from '../../helpers/import-graph.js';

const TSCONFIG = join(import.meta.dirname, '../../../tsconfig.json');
const SRC = join(import.meta.dirname, '../../../src');

/** Each `file -> target` edge of the graph from a file outside `rooms` into one of `into`. */
function edgesInto(
  graph: ReadonlyMap<string, readonly string[]>,
  rooms: readonly string[],
  into: readonly string[],
): string[] {
  const inside = (file: string, folders: readonly string[]) =>
    folders.some((folder) => file.startsWith(`${folder}/`));
  const edges: string[] = [];
  for (const [file, targets] of graph) {
    if (inside(file, rooms)) continue;
    for (const target of targets) if (inside(target, into)) edges.push(`${file} -> ${target}`);
  }
  return edges.sort();
}

describe('the layers of src/', () => {
  const graph = importGraph(SRC, TSCONFIG);

  it('has the engine in its own folder, the CLI and the daemon calling it', () => {
    expect(graph.has('engine/reconciler.ts')).toBe(true);
    expect(graph.get('cli/commands/run.ts')).toContain('engine/index.ts');
    expect(graph.get('daemon/types.ts')).toContain('engine/contract.ts');
  });

  it('keeps the CLI on top: no module outside src/cli imports src/cli', () => {
    expect(edgesInto(graph, ['cli'], ['cli'])).toEqual([]);
  });

  it('keeps the engine below the daemon: nothing in src/engine imports src/daemon or src/cli', () => {
    const fromEngine = [...graph]
      .filter(([file]) => file.startsWith('engine/'))
      .flatMap(([file, targets]) =>
        targets
          .filter((t) => t.startsWith('daemon/') || t.startsWith('cli/'))
          .map((t) => `${file} -> ${t}`),
      );
    expect(graph.size).toBeGreaterThan(100);
    expect(fromEngine).toEqual([]);
  });
});
