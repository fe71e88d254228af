import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ImportGraph,
  importCycles,
  importEdges,
  importGraph,
  loopThrough,
} from '../../helpers/import-graph.js';

const TSCONFIG = join(import.meta.dirname, '../../../tsconfig.json');
const SRC = join(import.meta.dirname, '../../../src');

/** Each cycle as one loop of imports, `a.ts -> b.ts -> a.ts`, for a message that says what to cut. */
function loops(graph: ImportGraph): string[] {
  return importCycles(graph).map((cycle) => loopThrough(graph, cycle[0] ?? '', cycle).join(' -> '));
}

describe('the import graph of src/', () => {
  const graph = importGraph(SRC, TSCONFIG);

  it('is read whole (every source file, its imports resolved by the compiler)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('cli/main.ts')).toContain('errors.ts');
    // A type-only import is an edge too.
    expect(graph.get('api/observe.ts')).toContain('api/types.ts');
  });

  it('has no import cycle, type-only imports included', () => {
    expect(loops(graph)).toEqual([]);
  });

  it("keeps the client's rooms below the client: transport, exchange, the operation table and pagination never reach client.ts", () => {
    const reaches = (from: string, to: string): boolean => {
      const seen = new Set<string>();
      const stack = [from];
      while (stack.length > 0) {
        const at = stack.pop() as string;
        if (at === to) return true;
        if (seen.has(at)) continue;
        seen.add(at);
        stack.push(...(graph.get(at) ?? []));
      }
      return false;
    };
    for (const room of [
      'api/transport.ts',
      'api/exchange.ts',
      'api/routes.ts',
      'api/pagination.ts',
    ]) {
      expect(graph.has(room), room).toBe(true);
      expect(reaches(room, 'api/client.ts'), room).toBe(false);
    }
  });
});

describe('the cycle finder', () => {
  const root = mkdtempSync(join(tmpdir(), 'edgesync-cycles-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (files: Record<string, string>): string => {
    const dir = mkdtempSync(join(root, 'tree-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it.each([
    [
      'type-only imports',
      {
        'a.ts': "import type { B } from './b.js';\nexport type A = { b: B };\n",
        'b.ts': "import type { A } from './a.js';\nexport type B = { a?: A };\n",
      },
    ],
    [
      'an import() type',
      {
        'a.ts': "export type A = import('./b.js').B;\n",
        'b.ts': "import type { A } from './a.js';\nexport type B = string;\nexport type C = A;\n",
      },
    ],
    [
      'a re-export',
      {
        'a.ts': "export * from './b.js';\nexport const a = 1;\n",
        'b.ts': "export { a } from './a.js';\nexport const b = 2;\n",
      },
    ],
    [
      'a dynamic import',
      {
        'a.ts': "export const a = () => import('./b.js');\n",
        'b.ts': "import { a } from './a.js';\nexport const b = a;\n",
      },
    ],
  ])('finds a cycle made by %s', (_, files) => {
    const graph = importGraph(write(files), TSCONFIG);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts']]);
    expect(loops(graph)).toEqual(['a.ts -> b.ts -> a.ts']);
  });

  it('tells an import only types come through from one loaded at run time, and keeps built-ins', () => {
    const dir = write({
      'a.ts':
        "import type { B } from './b.js';\nimport { type C } from './c.js';\nimport { readFileSync } from 'node:fs';\nexport type A = B | C | import('./d.js').D;\nexport const a = readFileSync;\n",
      'b.ts': 'export type B = string;\n',
      'c.ts': 'export type C = number;\n',
      'd.ts': 'export type D = boolean;\n',
    });
    expect(importEdges(dir, TSCONFIG).get('a.ts')).toEqual([
      { to: 'b.ts', external: false, typeOnly: true },
      // `import { type C }` still loads the module (verbatimModuleSyntax).
      { to: 'c.ts', external: false, typeOnly: false },
      { to: 'node:fs', external: true, typeOnly: false },
      { to: 'd.ts', external: false, typeOnly: true },
    ]);
    expect(importGraph(dir, TSCONFIG, { runtimeOnly: true }).get('a.ts')).toEqual(['c.ts']);
    expect(importGraph(dir, TSCONFIG).get('a.ts')).toEqual(['b.ts', 'c.ts', 'd.ts']);
  });

  it('refuses a relative import it cannot resolve (an edge would be missing)', () => {
    const dir = write({ 'a.ts': "import { b } from './gone.js';\nexport const a = b;\n" });
    expect(() => importGraph(dir, TSCONFIG)).toThrow('a.ts: cannot resolve ./gone.js');
  });

  it('finds a longer loop and a file importing itself, and no cycle in a chain', () => {
    const graph = importGraph(
      write({
        'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
        'b.ts': "import { c } from './c.js';\nexport const b = c;\n",
        'c.ts': "import type { A } from './d.js';\nexport const c = 1;\nexport type C = A;\n",
        'd.ts': "import type { a } from './a.js';\nexport type A = typeof a;\n",
        'self.ts': "export * as me from './self.js';\n",
        'leaf.ts':
          "import { a } from './a.js';\nimport { readFileSync } from 'node:fs';\nexport const l = [a, readFileSync];\n",
      }),
      TSCONFIG,
    );
    expect(loops(graph)).toEqual(['a.ts -> b.ts -> c.ts -> d.ts -> a.ts', 'self.ts -> self.ts']);
    expect(
      importCycles(
        importGraph(
          write({
            'x.ts': "import { y } from './y.js';\nexport const x = y;\n",
            'y.ts': 'export const y = 1;\n',
          }),
          TSCONFIG,
        ),
      ),
    ).toEqual([]);
  });
});
