// The import graph of a source tree, resolved by the TypeScript compiler itself (the same module
// resolution as `tsc`), so the layering test sees exactly the edges the build sees: static imports,
// `import type`, re-exports, `import('...')` types and dynamic imports alike; each edge says whether
// only types come through it, and imports of packages and built-ins are kept as written.
import { readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Each file (relative to root, forward slashes) with the files it imports from inside root. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (/\.(?:ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
      found.push(path);
  }
  return found;
}

/** A module specifier a file names, and whether only types come through it. */
interface Specifier {
  readonly name: string;
  /**
   * `import type`, `export type`, an `import('...')` type: erased from the JavaScript. An
   * `import { type A }` is not (under `verbatimModuleSyntax` the module is still loaded).
   */
  readonly typeOnly: boolean;
}

/** Every module specifier a file names, whatever the syntax that names it. */
function specifiers(file: ts.SourceFile): Specifier[] {
  const names: Specifier[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly = ts.isImportDeclaration(node)
        ? node.importClause?.isTypeOnly === true
        : node.isTypeOnly;
      names.push({ name: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      names.push({ name: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      names.push({ name: node.argument.literal.text, typeOnly: true });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      names.push({ name: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}

function readCompilerOptions(tsconfig: string): ts.CompilerOptions {
  const read = ts.readConfigFile(tsconfig, ts.sys.readFile);
  if (read.error !== undefined) {
    throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  }
  return ts.parseJsonConfigFileContent(read.config, ts.sys, resolve(tsconfig, '..')).options;
}

/**
 * One import of a file: another file inside the root (`to` relative to it, forward slashes), or a
 * package or built-in named as written (`external`: `node:fs`, `zod`).
 */
export interface ImportEdge {
  readonly to: string;
  readonly external: boolean;
  /** Only types come through it (see `Specifier.typeOnly`). */
  readonly typeOnly: boolean;
}

/** Each file of `root` with every import it makes, resolved with the options of `tsconfig`. */
export function importEdges(
  root: string,
  tsconfig: string,
): ReadonlyMap<string, readonly ImportEdge[]> {
  const options = readCompilerOptions(tsconfig);
  const absRoot = resolve(root);
  const host = ts.createCompilerHost(options);
  const edges = new Map<string, ImportEdge[]>();
  const name = (path: string): string => relative(absRoot, path).split(sep).join('/');
  for (const path of sourceFiles(absRoot)) {
    const text = ts.sys.readFile(path) ?? '';
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const out: ImportEdge[] = [];
    for (const spec of specifiers(file)) {
      const hit = ts.resolveModuleName(spec.name, path, options, host).resolvedModule;
      // A relative import the compiler cannot resolve would be an edge silently missing.
      if (hit === undefined && spec.name.startsWith('.')) {
        throw new Error(`${name(path)}: cannot resolve ${spec.name}`);
      }
      const target = hit === undefined ? undefined : resolve(hit.resolvedFileName);
      if (hit?.isExternalLibraryImport !== true && target?.startsWith(absRoot + sep)) {
        out.push({ to: name(target), external: false, typeOnly: spec.typeOnly });
      } else if (!spec.name.startsWith('.')) {
        out.push({ to: spec.name, external: true, typeOnly: spec.typeOnly });
      }
    }
    edges.set(name(path), out);
  }
  return edges;
}

/**
 * The graph of `root`'s source files (each with the files it imports from inside root), type-only
 * imports included unless `runtimeOnly`.
 */
export function importGraph(
  root: string,
  tsconfig: string,
  { runtimeOnly = false }: { readonly runtimeOnly?: boolean } = {},
): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const [file, edges] of importEdges(root, tsconfig)) {
    const targets = edges
      .filter((e) => !e.external && !(runtimeOnly && e.typeOnly))
      .map((e) => e.to);
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/**
 * The cycles of a graph: each strongly connected component of more than one file (or a file that
 * imports itself), files sorted, found with Tarjan's algorithm.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) {
      cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return cycles.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** One shortest loop from `start` back to itself inside a component, to name the edges to cut. */
export function loopThrough(
  graph: ImportGraph,
  start: string,
  within: readonly string[],
): string[] {
  const allowed = new Set(within);
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0 && !previous.has(start)) {
    const node = queue.shift() as string;
    for (const to of graph.get(node) ?? []) {
      if (!allowed.has(to) || previous.has(to)) continue;
      previous.set(to, node);
      queue.push(to);
    }
  }
  const loop: string[] = [start];
  for (let at = previous.get(start); at !== undefined && at !== start; at = previous.get(at)) {
    loop.unshift(at);
  }
  loop.unshift(start);
  return loop;
}

/** Where a tree raises an error outside the hierarchy: `new Error(...)` and its built-in kin, and classes extending them. */
export interface StrayError {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

const BUILT_IN_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'AggregateError',
]);

/** Every built-in error constructed (`new`, or called) or extended in `root`'s source files. */
export function strayErrors(root: string): StrayError[] {
  const absRoot = resolve(root);
  const found: StrayError[] = [];
  for (const path of sourceFiles(absRoot)) {
    const file = ts.createSourceFile(
      path,
      ts.sys.readFile(path) ?? '',
      ts.ScriptTarget.Latest,
      true,
    );
    const at = (node: ts.Node, what: string): void => {
      const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
      found.push({ file: relative(absRoot, path).split(sep).join('/'), line: line + 1, what });
    };
    const visit = (node: ts.Node): void => {
      if (
        (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
        ts.isIdentifier(node.expression) &&
        BUILT_IN_ERRORS.has(node.expression.text)
      ) {
        at(node, `new ${node.expression.text}`);
      } else if (ts.isClassLike(node)) {
        for (const clause of node.heritageClauses ?? []) {
          for (const type of clause.types) {
            if (ts.isIdentifier(type.expression) && BUILT_IN_ERRORS.has(type.expression.text)) {
              at(node, `class ${node.name?.text ?? '(anonymous)'} extends ${type.expression.text}`);
            }
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}
