/**
 * The plain-subset reader (`readPlainYaml`) against js-yaml, the reader it stands in front of:
 * wherever it answers, the values, the document starts and the routes' starts are js-yaml's;
 * where js-yaml fails, it does not answer. Texts come from js-yaml's own dump in many styles
 * (so most are in the subset), joined into multi-document files, decorated with comments and
 * blank lines, and then mutated a character at a time (so many are not, or are not YAML).
 */
import fc from 'fast-check';
import { CORE_SCHEMA, dump, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parseWithJsYaml } from '../../../src/manifest/fastyaml.js';
import { readPlainYaml } from '../../../src/manifest/plainyaml.js';

/** Strings chosen to sit on YAML's edges: numbers, booleans, nulls, indicators, quotes. */
const tricky = fc.constantFrom(
  '1.3',
  '0o17',
  '0x1F',
  '-1',
  '+1',
  '.5',
  '1e3',
  '.inf',
  '-.Inf',
  '.NaN',
  '~',
  'null',
  'Null',
  'true',
  'False',
  'yes',
  'on',
  '',
  ' ',
  'a: b',
  'a:b',
  'a #b',
  'a#b',
  '#x',
  '- x',
  '-x',
  '? x',
  ':x',
  '[x]',
  '{x}',
  'x, y',
  "it's",
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  'é ü ß',
  '*alias',
  '&anchor',
  '!tag',
  '|',
  '>',
  '%',
  '@',
  '`',
  'tcp-1.example.com:443',
  '/api/v1',
  '---',
  '...',
  '__proto__',
  '<<',
);
const plainWord = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,8}$/);
const scalar = fc.oneof(
  { weight: 4, arbitrary: plainWord },
  { weight: 3, arbitrary: tricky },
  { weight: 1, arbitrary: fc.integer({ min: -1000, max: 100000 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, min: -1e6, max: 1e6 }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const key = fc.oneof(
  { weight: 5, arbitrary: plainWord },
  { weight: 1, arbitrary: tricky },
  { weight: 1, arbitrary: fc.constantFrom('env', 'file') },
);

const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('tree'), { maxLength: 4 }),
    fc.dictionary(key, tie('tree'), { maxKeys: 5 }),
  ),
}));

/** A manifest-like document: a mapping with a `routes` list of mappings. */
const document = fc.record({
  kind: fc.constantFrom('TLSEdge', 'HTTPSEdge', 'BotUser'),
  name: plainWord,
  extra: fc.dictionary(key, tree, { maxKeys: 4 }),
  routes: fc.array(fc.dictionary(key, tree, { minKeys: 1, maxKeys: 4 }), { maxLength: 3 }),
});

const style = fc.record({
  flowLevel: fc.constantFrom(-1, 1, 2, 3),
  indent: fc.constantFrom(2, 4),
  noArrayIndent: fc.boolean(),
  quotingType: fc.constantFrom("'", '"') as fc.Arbitrary<"'" | '"'>,
  forceQuotes: fc.boolean(),
  condenseFlow: fc.boolean(),
});

type Doc = typeof document extends fc.Arbitrary<infer T> ? T : never;
type Style = typeof style extends fc.Arbitrary<infer T> ? T : never;

function render(docs: readonly Doc[], options: Style): string {
  return docs
    .map((d) => {
      const value: Record<string, unknown> = { kind: d.kind, name: d.name, ...d.extra };
      if (d.routes.length > 0) value.routes = d.routes;
      return dump(value, { ...options, schema: CORE_SCHEMA, lineWidth: -1 });
    })
    .join('---\n');
}

/** Comments and blank lines at line ends and between lines. */
function decorate(text: string, at: readonly number[]): string {
  const lines = text.split('\n');
  for (const n of at) {
    const i = n % (lines.length + 1);
    if (n % 3 === 0) lines.splice(i, 0, '');
    else if (n % 3 === 1) lines.splice(i, 0, `${' '.repeat(n % 5)}# note ${n}`);
    else if (lines[i] !== undefined && lines[i] !== '' && !lines[i]?.endsWith('|'))
      lines[i] = `${lines[i]} # c`;
  }
  return lines.join('\n');
}

const EDIT_CHARS = [
  ' ',
  ':',
  '-',
  '#',
  '"',
  "'",
  '[',
  ']',
  '{',
  '}',
  ',',
  '\n',
  'a',
  '1',
  '&',
  '*',
  '!',
  '|',
  '?',
  '\\',
];

function mutate(text: string, edits: readonly [number, number, number][]): string {
  let out = text;
  for (const [where, what, kind] of edits) {
    const i = where % (out.length + 1);
    const c = EDIT_CHARS[what % EDIT_CHARS.length] as string;
    out = kind % 2 === 0 ? out.slice(0, i) + c + out.slice(i) : out.slice(0, i) + out.slice(i + 1);
  }
  return out;
}

function jsYamlValues(text: string): unknown[] | undefined {
  try {
    return loadAll(text, undefined, { schema: CORE_SCHEMA }).filter(
      (v) => v !== null && v !== undefined,
    );
  } catch {
    return undefined;
  }
}

/** Whether some mapping in `value` has only `env` and `file` keys (it could be a reference). */
function holdsReferenceLike(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsReferenceLike);
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((k) => k === 'env' || k === 'file')) return true;
  return Object.values(value).some(holdsReferenceLike);
}

/**
 * The property: an answer is js-yaml's answer (values, starts, route starts), and a document
 * said to be reference-free holds nothing that could be a reference.
 */
function agrees(text: string): boolean {
  const mine = readPlainYaml(text);
  if (mine === undefined) return true;
  const reference = jsYamlValues(text);
  expect(reference, `js-yaml rejects what the subset read:\n${text}`).toBeDefined();
  expect(mine.map((d) => d.value)).toStrictEqual(reference);
  for (const d of mine)
    if (d.referenceFree === true) expect(holdsReferenceLike(d.value)).toBe(false);
  const theirs = parseWithJsYaml(text);
  if (theirs === undefined) return true; // js-yaml read it, but its fast path declines (anchors)
  expect(mine.map((d) => d.start)).toStrictEqual(theirs.map((d) => d.start));
  mine.forEach((d, i) => {
    const routes = (d.value as { routes?: unknown }).routes;
    const other = (theirs[i]?.value as { routes?: unknown } | undefined)?.routes;
    if (!Array.isArray(routes) || !Array.isArray(other)) return;
    routes.forEach((r, j) => {
      if (typeof r !== 'object' || r === null) return;
      expect(d.positionOf(r)).toStrictEqual(theirs[i]?.positionOf(other[j] as object));
    });
  });
  return true;
}

describe('readPlainYaml against js-yaml', () => {
  it('reads what js-yaml dumps, in every style, as js-yaml reads it', () => {
    let answered = 0;
    fc.assert(
      fc.property(
        fc.array(document, { minLength: 1, maxLength: 3 }),
        style,
        fc.array(fc.nat(), { maxLength: 6 }),
        (docs, options, at) => {
          const text = decorate(render(docs, options), at);
          if (readPlainYaml(text) !== undefined) answered += 1;
          return agrees(text);
        },
      ),
      { numRuns: 1500 },
    );
    // Most of these texts are in the subset: a reader that declined everything would pass above.
    expect(answered).toBeGreaterThan(600);
  });

  it('never answers differently from js-yaml, nor where it fails, after random edits', () => {
    fc.assert(
      fc.property(
        fc.array(document, { minLength: 1, maxLength: 2 }),
        style,
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }),
        (docs, options, edits) => agrees(mutate(render(docs, options), edits)),
      ),
      { numRuns: 3000 },
    );
  });

  it('reads the example manifests and the benchmark corpus style', () => {
    const text = [
      'kind: TLSEdge',
      'name: tcp-200',
      'description: TCP service 200',
      'metadata: { team: platform }',
      'hostports: [tcp-200.example.com:443]',
      'tls_termination: { terminate_at: edge, min_version: "1.3" }',
      'traffic_policy: { value: { on_tcp_connect: [{ actions: [{ type: log }] }] } }',
      '---',
      "# a route list at its key's indent",
      'kind: HTTPSEdge',
      'name: web',
      'routes:',
      '- match_type: path_prefix',
      "  match: '/'",
      '  backend:',
      '    backend_id: bkd_1 # comment',
      '-   match: /b',
      '    compression: {}',
      '',
    ].join('\n');
    const docs = readPlainYaml(text);
    expect(docs).toBeDefined();
    expect(docs?.map((d) => d.start)).toStrictEqual([
      { line: 1, column: 1 },
      { line: 10, column: 1 },
    ]);
    agrees(text);
  });

  it('declines what is outside the subset', () => {
    for (const text of [
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      'a: |\n  text\n',
      'a: one\n  two\n',
      'a: [1,\n  2]\n',
      'a: 1\na: 2\n',
      'a:\tb\n',
      'a: b\r\n',
      '? a\n: b\n',
      '- a\n- b\n',
      'just a scalar\n',
      'a: "\\x41"\n',
      '%YAML 1.2\n---\na: 1\n',
      'a: 1\n...\n',
      '<<: {a: 1}\n',
      'a: [b: c]\n',
    ]) {
      expect(readPlainYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});
