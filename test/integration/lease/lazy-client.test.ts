/**
 * The Kubernetes client (`@kubernetes/client-node`, some 900 modules) is loaded only for
 * `run --leader-elect`: a daemon without leader election would otherwise hold its source and code
 * (45-50 MiB resident at 10,000 edges, bench `daemon`). Checked on the bundle the CLI runs
 * (`dist/bundle/`, built by `npm test`'s `pretest`): no command's chunk reaches the client through
 * static imports, and `run` reaches it through its one dynamic import.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BUNDLE = fileURLToPath(new URL('../../../dist/bundle/', import.meta.url));
const CLIENT = '@kubernetes/client-node';

/** `import … from "x"`, `import "x"` and `export … from "x"` (esbuild's ESM output). */
const STATIC = /(?:^|[;\n])\s*(?:import|export)\s*(?:[^'"();]*?\bfrom\s*)?"([^"]+)"/g;
const DYNAMIC = /\bimport\(\s*"([^"]+)"\s*\)/g;

function specifiers(file: string, pattern: RegExp): string[] {
  const text = readFileSync(path.join(BUNDLE, file), 'utf8');
  return [...text.matchAll(pattern)].map((m) => m[1] as string);
}

/** Every specifier reachable from `entry` through static imports only. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    for (const spec of specifiers(file, STATIC)) {
      if (seen.has(spec)) continue;
      seen.add(spec);
      if (spec.startsWith('./')) queue.push(spec.slice(2));
    }
  }
  return seen;
}

/**
 * A command's chunk, as `main.js` loads it (a dynamic import per command, in `main.js` or in a
 * chunk it imports statically: the command table is shared with `completion`).
 */
function chunk(command: string): string {
  const files = [
    'main.js',
    ...[...staticClosure('main.js')].filter((s) => s.startsWith('./')).map((s) => s.slice(2)),
  ];
  const found = files
    .flatMap((f) => specifiers(f, DYNAMIC))
    .find((s) => s.startsWith(`./${command}-`));
  if (found === undefined) throw new Error(`main.js does not import a ${command} chunk`);
  return found.slice(2);
}

describe('the Kubernetes client is loaded only for leader election', () => {
  it.each(['main', 'run', 'plan', 'apply', 'validate', 'server'])(
    '%s does not import it statically',
    (name) => {
      const entry = name === 'main' ? 'main.js' : chunk(name);
      expect([...staticClosure(entry)]).not.toContain(CLIENT);
    },
  );

  it('run reaches it through a dynamic import (the check above can fail)', () => {
    const lazy = specifiers(chunk('run'), DYNAMIC).filter((s) => s.startsWith('./'));
    const reached = lazy.some((spec) => staticClosure(spec.slice(2)).has(CLIENT));
    expect(reached).toBe(true);
  });
});
