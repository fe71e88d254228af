import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importEdges, importGraph } from '../../helpers/import-graph.js';

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

/** Each `file -> target` edge of the graph from a file inside `from` into one of `into`. */
function edgesFrom(
  graph: ReadonlyMap<string, readonly string[]>,
  from: string,
  into: readonly string[],
): string[] {
  const edges: string[] = [];
  for (const [file, targets] of graph) {
    if (!file.startsWith(`${from}/`)) continue;
    for (const target of targets) {
      if (into.some((folder) => target === folder || target.startsWith(`${folder}/`))) {
        edges.push(`${file} -> ${target}`);
      }
    }
  }
  return edges.sort();
}

/** Every file `start` files reach through `graph`, themselves included. */
function reachable(graph: ReadonlyMap<string, readonly string[]>, start: readonly string[]) {
  const seen = new Set<string>();
  const stack = [...start];
  while (stack.length > 0) {
    const at = stack.pop() as string;
    if (seen.has(at)) continue;
    seen.add(at);
    stack.push(...(graph.get(at) ?? []));
  }
  return seen;
}

describe('the layers of src/', () => {
  const graph = importGraph(SRC, TSCONFIG);
  const runtime = importGraph(SRC, TSCONFIG, { runtimeOnly: true });
  const edges = importEdges(SRC, TSCONFIG);

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

  it('keeps the manifest below the plan: nothing in src/manifest imports src/plan, types included', () => {
    expect(graph.has('plan/mask.ts')).toBe(true);
    expect(edgesFrom(graph, 'manifest', ['plan'])).toEqual([]);
  });

  it('keeps the plan pure: no node:* module (types included), and no API client at run time', () => {
    const builtIns = [...edges]
      .filter(([file]) => file.startsWith('plan/'))
      .flatMap(([file, list]) =>
        list.filter((e) => e.external && e.to.startsWith('node:')).map((e) => `${file} -> ${e.to}`),
      );
    expect(builtIns).toEqual([]);
    // What the plan loads, all the way down: the API's facts (its schemas, its table of
    // operations) may be among them, never the client, its transport or its exchange.
    const planFiles = [...runtime.keys()].filter((f) => f.startsWith('plan/'));
    const loaded = reachable(runtime, planFiles);
    const client = ['api/client.ts', 'api/transport.ts', 'api/exchange.ts', 'api/index.ts'];
    for (const file of client) expect(graph.has(file), file).toBe(true);
    expect(client.filter((f) => loaded.has(f))).toEqual([]);
    expect([...loaded].filter((f) => f.startsWith('apply/') || f.startsWith('engine/'))).toEqual(
      [],
    );
  });

  it('has the CLI reach the applier through the engine: no src/cli module loads src/apply', () => {
    expect(graph.get('cli/commands/apply.ts')).toContain('engine/index.ts');
    expect(edgesFrom(runtime, 'cli', ['apply'])).toEqual([]);
  });

  it('has plan, apply and the daemon call the one run of the engine', () => {
    for (const caller of ['cli/commands/plan.ts', 'cli/commands/apply.ts']) {
      expect(graph.get(caller), caller).toContain('engine/index.ts');
    }
    expect(graph.get('engine/index.ts')).toContain('engine/run.ts');
    expect(graph.get('engine/reconciler.ts')).toContain('engine/run.ts');
    // The guards are checked in the run (and by the executor only for a plan it was not handed
    // a verdict for): no caller above the engine checks them itself.
    const guards = [...runtime]
      .filter(
        ([file, targets]) => !file.startsWith('apply/') && targets.includes('apply/guards.ts'),
      )
      .map(([file]) => file);
    expect(guards.sort()).toEqual(['engine/run.ts']);
  });
});
