/**
 * From manifest files (bytes) to the DesiredSet or the complete list of diagnostics: decoding
 * (size cap, binary and UTF-8 checks), YAML parsing, `{env}`/`{file}` resolution, the shape
 * phase (zod, with "did you mean" for unknown fields), the semantic phase over the whole set,
 * and assembly of the model (`source`, `sensitive`). Pure: file listing and reading live in
 * `./loader.ts`; environment and referenced files come through the injected `RefReader`.
 */

import { createHash } from 'node:crypto';
import type { Diagnostic } from '../errors.js';
import { EdgesyncError } from '../errors.js';
import { HEADER_MODULES } from '../hosted/modules/index.js';
import { normalisedPolicy } from '../hosted/policy-actions.js';
import { madeInPlace } from '../in-place.js';
import type { Declared, FieldRule } from '../kinds/definition.js';
import { AcrossIndex } from './across.js';
import { isCredentialHeader } from './credential-headers.js';
import { sortDiagnostics } from './diagnostics.js';
import { DIGEST_KEY_HELP, writeOnlyDigest } from './digest.js';
import { defaultBinding, parseEndpointUrl } from './endpoint-url.js';
import { DEFAULT_OWNER } from './metadata.js';
import { aboutPruned, originalPath } from './partial.js';
import { type FieldPath, formatPath, uniquePaths } from './paths.js';
import { policySecretPaths } from './policy/secrets.js';
import type { RefReader } from './refs.js';
import {
  type BotUserManifest,
  type CloudEndpointManifest,
  type DesiredSet,
  genericKindOf,
  type HttpsEdgeManifest,
  isServiceUser,
  isServiceUserKind,
  type RouteManifest,
  type Source,
  type TlsEdgeManifest,
  type TrafficPolicyDocument,
} from './schema.js';
import { maskValues } from './secrets.js';
import { checkWithinDocuments, type DocumentValue } from './semantics.js';
import {
  type DeferredCheck,
  decode,
  type FileResult,
  fileProblem,
  processFile,
  type ShapedDoc,
} from './shape.js';
import type { Anchor, Position } from './yaml.js';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_ALIAS_COUNT = 100;

/** A manifest file: path relative to the manifest directory (`/`-separated), and its content. */
export type SourceFile =
  | { readonly file: string; readonly bytes: Uint8Array }
  /**
   * Already decoded (`decode`): the loader decodes each file as it reads it, so the bytes of
   * 1,000 files are not all held (and promoted, and kept until a full collection) at once.
   */
  | { readonly file: string; readonly text: string | { readonly error: string } }
  /**
   * As the cache's last build had it (the loader knows it was not touched since): its kept
   * result is taken as it is, without its text. Only with a `cache` holding the file.
   */
  | { readonly file: string; readonly unchanged: true };

export interface BuildOptions {
  /** Owner id stored in edge metadata (counts towards its byte limit). Default `default`. */
  readonly owner?: string;
  /** See `LoadOptions.policyTests` (default true). */
  readonly policyTests?: boolean;
  readonly reader: RefReader;
  readonly maxFileBytes?: number;
  readonly maxAliasCount?: number;
  /**
   * Kept between builds by a long-running caller (the daemon): the shape phase of a file whose
   * text is unchanged is not run again, and its resources are the same objects as last time
   * (the planner's memo keys on them). See `FileCache`.
   */
  readonly cache?: FileCache;
  /**
   * The controller's key for the digests of write-only values (a secret's value), or why it has
   * none usable (./digest.ts). Without one, a set declaring such a value is refused (unless the
   * reader defers: `validate` needs no key).
   */
  readonly digestKey?: { readonly key: string } | { readonly problem: string } | undefined;
}

/** A document in the rules across documents: its place in the set's order (see `before`). */
interface IndexedDoc {
  readonly value: DocumentValue;
  readonly shaped: ShapedDoc;
  /** Documents with shape errors come after every whole one, as they always have. */
  readonly partial: boolean;
  /** Its place among its file's whole (or partial) documents. */
  readonly position: number;
}

/** The set's order: whole documents first, then by file, then by place in the file. */
function before(a: IndexedDoc, b: IndexedDoc): number {
  if (a.partial !== b.partial) return a.partial ? 1 : -1;
  const file = a.shaped.file < b.shaped.file ? -1 : a.shaped.file > b.shaped.file ? 1 : 0;
  return file || a.position - b.position;
}

/** What a build keeps of one file: its shape phase, its own findings, its documents. */
interface FileEntry {
  /** Of the text it was built from; undefined when not kept across texts (`reusable`). */
  readonly digest: string | undefined;
  /** The file could not be decoded: its one problem, and no documents. */
  readonly problem: Diagnostic | undefined;
  readonly result: FileResult;
  /** The documents' own rules' findings (messages not yet masked). */
  readonly own: readonly Diagnostic[];
  /** Where write-only values come from (./build.ts `writeOnlyIssues`). */
  readonly writeOnly: readonly Diagnostic[];
  readonly docs: readonly IndexedDoc[];
  readonly counts: Readonly<Record<string, number>>;
  /**
   * Depends on nothing but its text: no `{ env }` / `{ file }` reference, no diagnostic. Any
   * other file is built again whenever it is handed over with its text.
   */
  readonly reusable: boolean;
}

/**
 * What a build keeps for the next one: each file's shape-phase result and findings by path, the
 * index of the rules across documents (./across.ts) and the set last assembled. A file handed
 * over with the text its kept result came from (same digest), or as `unchanged`, is not parsed
 * again and its resources are the same objects as last time (the planner's memo keys on them);
 * only the documents of changed files go through the rules across documents again, and the set
 * is patched where they are. Only files whose result depends on nothing but their text are
 * reused across texts: no `{ env }` / `{ file }` reference, no diagnostic. One cache serves one
 * set of build options (owner, alias bound, digest key). A kept result holds neither the text
 * nor the parse (see `processFile`): a diagnostic about a kept document (a name another file now
 * repeats) is located from the positions it kept.
 *
 * The loader keeps its side here too (`LoadMemory`: the listing and each file's stamp), so that a
 * daemon's load after a file event reads only what changed (`touch`).
 */
export class FileCache {
  readonly #files = new Map<string, FileEntry>();
  readonly #index = new AcrossIndex<IndexedDoc>({
    before,
    where: (d, path) => {
      const { line, column } = position(d.shaped, path);
      return `${d.shaped.file}:${line}:${column}`;
    },
  });
  /** The set last assembled, and the files whose documents changed since. */
  #set: DesiredSet | undefined;
  readonly #sinceSet = new Set<string>();
  /** The documents taken out since the set was assembled. */
  #goneSinceSet: ShapedDoc[] = [];
  /** Every kept file's counts summed, kept as files are replaced (no walk of the files). */
  readonly #totals = new Map<string, number>();

  /** Files whose kept result may serve another build of the same text. */
  get size(): number {
    let n = 0;
    for (const entry of this.#files.values()) if (entry.reusable) n += 1;
    return n;
  }

  /**
   * How many edges, bot users and cloud endpoints the last build found in `file` (0 when it
   * holds none): what the set of a build without findings holds from it, without walking it.
   */
  declaredIn(file: string): number {
    const counts = this.#files.get(file)?.counts;
    if (counts === undefined) return 0;
    return (
      (counts.tls_edges ?? 0) +
      (counts.https_edges ?? 0) +
      (counts.bot_users ?? 0) +
      (counts.cloud_endpoints ?? 0)
    );
  }

  /** True when `file`'s kept result may be handed back as `unchanged`. */
  reusable(file: string): boolean {
    return this.#files.get(file)?.reusable === true;
  }

  /** @internal the build's */
  entry(file: string): FileEntry | undefined {
    return this.#files.get(file);
  }

  /** @internal the build's: `file`'s entry replaced (undefined: removed). */
  replace(file: string, entry: FileEntry | undefined): void {
    const old = this.#files.get(file);
    this.#index.update(old?.docs ?? [], entry?.docs ?? []);
    this.#count(old?.counts, -1);
    this.#count(entry?.counts, 1);
    if (old !== undefined && this.#set !== undefined) {
      this.#goneSinceSet.push(...old.result.shaped);
      // A set invalid through many edits: assembled afresh once it is valid again.
      if (this.#goneSinceSet.length > this.#files.size * 4 + 1000) {
        this.#set = undefined;
        this.#goneSinceSet = [];
      }
    }
    if (entry === undefined) this.#files.delete(file);
    else this.#files.set(file, entry);
    this.#sinceSet.add(file);
  }

  #count(counts: FileEntry['counts'] | undefined, by: 1 | -1): void {
    for (const k in counts) this.#totals.set(k, (this.#totals.get(k) ?? 0) + by * (counts[k] ?? 0));
  }

  /**
   * @internal the build's: each count summed over the files kept (those counted down to none
   * left out, as a sum of the files' own counts has them).
   */
  totals(): IterableIterator<[string, number]> {
    return this.#totals.entries();
  }

  /** @internal the build's: the files kept, in no order. */
  files(): IterableIterator<string> {
    return this.#files.keys();
  }

  /** @internal the build's: the findings of the rules across documents. */
  acrossIssues(): Diagnostic[] {
    return this.#index.issues().flatMap((issue) => locateIssue(issue.doc.shaped, issue) ?? []);
  }

  /**
   * @internal the build's: the set of `entries` (every file, in order), patched from the last
   * one where few files changed since, else assembled afresh.
   */
  assembled(entries: readonly FileEntry[], digestKey: string | undefined): DesiredSet {
    const last = this.#set;
    // No file changed since (a file event whose file reads as it did): the same set, so that
    // everything keyed on its objects (the planner's patch) finds nothing to do.
    if (last !== undefined && this.#sinceSet.size === 0) return last;
    let set: DesiredSet;
    if (last !== undefined && this.#sinceSet.size * 8 <= entries.length) {
      set = patched(
        last,
        this.#goneSinceSet,
        [...this.#sinceSet].flatMap((f) => this.#files.get(f)?.result.shaped ?? []),
        digestKey,
      );
    } else {
      set = assemble(
        entries.flatMap((e) => e.result.shaped),
        digestKey,
      );
    }
    this.#set = set;
    this.#sinceSet.clear();
    this.#goneSinceSet = [];
    return set;
  }
}

/** SHA-256 of a file's text: 5 ms for the 7 MB of 10,000 edges. */
export function textDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

export interface ResourceCounts {
  files: number;
  documents: number;
  tls_edges: number;
  https_edges: number;
  routes: number;
  bot_users: number;
  cloud_endpoints: number;
  /** Every kind planned generically, by its plural (`reserved_domains`), when declared. */
  [plural: string]: number;
}

/**
 * `deferred` lists the references left for later; it is never empty unless the reader defers
 * (`validate`, which does not act on the set: a document missing a deferred required value is
 * not assembled into it).
 */
export type BuildResult =
  | {
      readonly ok: true;
      readonly set: DesiredSet;
      readonly diagnostics: [];
      readonly counts: ResourceCounts;
      readonly deferred: DeferredCheck[];
    }
  | {
      readonly ok: false;
      readonly diagnostics: Diagnostic[];
      readonly counts: ResourceCounts;
      readonly deferred: DeferredCheck[];
    };

export function buildDesiredSet(files: readonly SourceFile[], options: BuildOptions): BuildResult {
  const owner = options.owner ?? DEFAULT_OWNER;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxAliasCount = options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT;
  // Without a kept cache, a fresh one: a full build is an incremental one from nothing.
  const cache = options.cache ?? new FileCache();
  const digests = options.cache !== undefined;

  const ordered = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const listed = new Set(ordered.map((f) => f.file));
  for (const file of [...cache.files()]) if (!listed.has(file)) cache.replace(file, undefined);
  for (const source of ordered) {
    if ('unchanged' in source) {
      if (cache.entry(source.file) !== undefined) continue;
      throw new EdgesyncError('ES_INTERNAL', `no kept result for unchanged ${source.file}`);
    }
    const text = 'text' in source ? source.text : decode(source.bytes, maxFileBytes);
    if (typeof text !== 'string') {
      cache.replace(source.file, problemEntry(fileProblem(source.file, text.error)));
      continue;
    }
    const digest = digests ? textDigest(text) : undefined;
    const kept = cache.entry(source.file);
    if (kept?.reusable === true && digest !== undefined && kept.digest === digest) continue;
    cache.replace(
      source.file,
      buildEntry(source.file, text, digest, options, owner, maxAliasCount),
    );
  }

  const diagnostics: Diagnostic[] = [];
  /** Diagnostics of the semantic rules, their messages masked once every secret is known. */
  const semantic: Diagnostic[] = [];
  const counts: ResourceCounts = {
    files: files.length,
    documents: 0,
    tls_edges: 0,
    https_edges: 0,
    routes: 0,
    bot_users: 0,
    cloud_endpoints: 0,
  };
  const deferred: DeferredCheck[] = [];
  const entries: FileEntry[] = [];
  for (const source of ordered) {
    const entry = cache.entry(source.file) as FileEntry;
    entries.push(entry);
    // Per file, not per document: a kept file costs a few lookups.
    if (entry.problem !== undefined) diagnostics.push(entry.problem);
    if (entry.result.diagnostics.length > 0) diagnostics.push(...entry.result.diagnostics);
    if (entry.writeOnly.length > 0) diagnostics.push(...entry.writeOnly);
    if (entry.own.length > 0) semantic.push(...entry.own);
    if (entry.result.deferred.length > 0) deferred.push(...entry.result.deferred);
  }
  // The kept files are exactly these now: their counts, summed as they were replaced, when they
  // are the usual ones (a kind counted by its plural is added in the order the files name it).
  const totals = [...cache.totals()].filter(([k, n]) => n !== 0 || k in counts);
  if (listed.size === ordered.length && totals.every(([k]) => k in counts)) {
    for (const [k, n] of totals) counts[k] = (counts[k] ?? 0) + n;
  } else {
    for (const entry of entries) {
      for (const k in entry.counts) counts[k] = (counts[k] ?? 0) + (entry.counts[k] ?? 0);
    }
  }
  semantic.push(...cache.acrossIssues());
  if (semantic.length > 0) {
    const secrets = entries.flatMap((e) => [
      ...e.result.shaped.flatMap((d) => d.secrets),
      ...e.result.partials.flatMap((d) => d.secrets),
    ]);
    for (const d of semantic) {
      diagnostics.push(
        secrets.length === 0 ? d : { ...d, message: maskValues(d.message, secrets) },
      );
    }
  }

  if (diagnostics.length > 0) {
    return { ok: false, diagnostics: sortDiagnostics(diagnostics), counts, deferred };
  }
  const key =
    options.digestKey !== undefined && 'key' in options.digestKey
      ? options.digestKey.key
      : undefined;
  return { ok: true, set: cache.assembled(entries, key), diagnostics: [], counts, deferred };
}

const NO_RESULT: FileResult = {
  diagnostics: [],
  kinds: [],
  shaped: [],
  partials: [],
  deferred: [],
};

function problemEntry(problem: Diagnostic): FileEntry {
  return {
    digest: undefined,
    problem,
    result: NO_RESULT,
    own: [],
    writeOnly: [],
    docs: [],
    counts: {},
    reusable: false,
  };
}

/** One file through the shape phase and its documents' own rules. */
function buildEntry(
  file: string,
  text: string,
  digest: string | undefined,
  options: BuildOptions,
  owner: string,
  maxAliasCount: number,
): FileEntry {
  // The documents' own rules while each one's parse is at hand; then the parse goes,
  // document by document (see `processFile`).
  const { result, own } = processFile(file, text, options.reader, {
    maxAliasCount,
    ownRules: (d) => located([d], checkWithinDocuments, owner, options.policyTests ?? true),
  });
  const docs: IndexedDoc[] = [
    ...result.shaped.map((shaped, position) => ({
      value: shaped.value,
      shaped,
      partial: false,
      position,
    })),
    ...result.partials.map((shaped, position) => ({
      value: shaped.value,
      shaped,
      partial: true,
      position,
    })),
  ];
  const reusable =
    own.length === 0 &&
    result.diagnostics.length === 0 &&
    result.partials.length === 0 &&
    result.deferred.length === 0 &&
    // Values read from env or file can change under an unchanged text; secrets written inline
    // (a policy's secret config fields, in `secrets` for masking only) cannot.
    result.shaped.every((d) => d.sensitive.length === 0);
  return {
    digest: reusable ? digest : undefined,
    problem: undefined,
    result,
    own,
    writeOnly: writeOnlyIssues([...result.shaped, ...result.partials], options),
    docs,
    counts: countsOf(result),
    reusable,
  };
}

/** What one file adds to `ResourceCounts` (all but `files`). */
function countsOf(result: FileResult): Record<string, number> {
  const counts: Record<string, number> = { documents: result.kinds.length };
  const add = (k: string, n = 1) => {
    counts[k] = (counts[k] ?? 0) + n;
  };
  for (const kind of result.kinds) {
    if (kind === 'TLSEdge') add('tls_edges');
    else if (kind === 'HTTPSEdge') add('https_edges');
    else if (isServiceUserKind(kind)) add('bot_users');
    else if (kind === 'CloudEndpoint') add('cloud_endpoints');
    else {
      const generic = kind === undefined ? undefined : genericKindOf(kind);
      if (generic !== undefined) add(generic.plural);
    }
  }
  for (const d of result.shaped) {
    if (d.value.kind === 'HTTPSEdge') add('routes', d.value.routes.length);
  }
  for (const d of result.partials) {
    // A document only missing a deferred value is whole as written: its routes count.
    if (d.deferred !== undefined && d.value.kind === 'HTTPSEdge' && d.partial !== undefined) {
      add('routes', d.partial.routeIndex.length);
      add('routes', d.partial.pruned.filter((p) => p[0] === 'routes' && p.length === 2).length);
    }
  }
  return counts;
}

/** The write-only fields of a document's kind (a secret's value); none for most kinds. */
function writeOnlyRules(kind: string): readonly FieldRule[] {
  return (genericKindOf(kind)?.fields ?? []).filter((r) => r.writeOnly === true);
}

/**
 * A write-only value (never read back: compared through a keyed digest) comes only from
 * `{ env }` or `{ file }`, never inline (a manifest is read by everyone who reads the
 * repository), and needs the controller's digest key where values are resolved.
 */
function writeOnlyIssues(docs: readonly ShapedDoc[], options: BuildOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const d of docs) {
    for (const rule of writeOnlyRules(d.value.kind)) {
      const path: FieldPath = [rule.name];
      const same = (p: FieldPath) => p.length === 1 && p[0] === rule.name;
      if ((d.deferred ?? []).some(same)) continue;
      const fields = d.value as Record<string, unknown>;
      const at = position(d, fields[rule.name] === undefined ? [] : path);
      const issue = (message: string): Diagnostic => ({
        file: d.file,
        line: at.line,
        column: at.column,
        path: rule.name,
        message,
        severity: 'error',
      });
      if (fields[rule.name] === undefined) {
        // Optional in the schema so that a document whose value is left for later still takes
        // part in the rules across documents; only deleting needs none.
        if (fields.ensure !== 'absent' && d.partial === undefined) {
          out.push(
            issue(
              `${d.value.kind} ${rule.name} is required (from { env: NAME } or { file: PATH }) unless ensure: absent`,
            ),
          );
        }
        continue;
      }
      if (!d.sensitive.some(same)) {
        out.push(
          issue(
            `${d.value.kind} ${rule.name} must come from { env: NAME } or { file: PATH }, never written inline`,
          ),
        );
        continue;
      }
      if (options.reader.deferUnresolved === true) continue;
      const key = options.digestKey;
      if (key === undefined || 'problem' in key) {
        const why = key === undefined ? 'no secret digest key is given' : key.problem;
        out.push(
          issue(
            `${why}: a ${d.value.kind}'s ${rule.name} is never read back and is compared through a keyed digest; ${DIGEST_KEY_HELP}`,
          ),
        );
      }
    }
  }
  return out;
}

/** Where a semantic issue's path is in the document as written (a partial one is renumbered). */
function written(d: ShapedDoc, path: FieldPath): FieldPath {
  return d.partial === undefined ? path : originalPath(d.partial, path);
}

function position(d: ShapedDoc, path: FieldPath, anchor?: Anchor): Position {
  return d.doc.locate(written(d, path), anchor);
}

/** The semantic issues of `docs`, located (messages not yet masked). */
function located(
  docs: readonly ShapedDoc[],
  check: typeof checkWithinDocuments,
  owner: string,
  policyTests = true,
): Diagnostic[] {
  const issues = check(
    docs.map((d, id) =>
      d.sensitive.length === 0
        ? { id, value: d.value }
        : { id, value: d.value, sensitive: d.sensitive },
    ),
    {
      owner,
      policyTests,
      where: (id, path) => {
        const d = docs[id] as ShapedDoc;
        const { line, column } = position(d, path);
        return `${d.file}:${line}:${column}`;
      },
    },
  );
  return issues.flatMap((issue) => locateIssue(docs[issue.doc] as ShapedDoc, issue) ?? []);
}

/**
 * A rule's issue about `d` as a diagnostic, or undefined when it is about a part of a partial
 * document that was pruned, or about a value left for later.
 */
function locateIssue(
  d: ShapedDoc,
  issue: { readonly path: FieldPath; readonly message: string; readonly anchor?: Anchor },
): Diagnostic | undefined {
  const path = written(d, issue.path);
  if (d.partial !== undefined && aboutPruned(d.partial, path)) return undefined;
  if (d.deferred !== undefined && aboutDeferred(d.deferred, path)) return undefined;
  const { line, column } = position(d, issue.path, issue.anchor);
  return {
    file: d.file,
    line,
    column,
    path: formatPath(issue.anchor === 'key' ? path.slice(0, -1) : path),
    message: issue.message,
    severity: 'error',
  };
}

/**
 * A rule's finding about a field left for later, or about what holds it (a pair of fields that
 * go together), judges a value that is not there yet: the cycle that resolves it checks again.
 */
function aboutDeferred(deferred: readonly FieldPath[], path: FieldPath): boolean {
  const startsWith = (a: FieldPath, b: FieldPath) =>
    b.length <= a.length && b.every((s, i) => s === a[i]);
  return deferred.some(
    (f) => startsWith(path, f) || (path.length === f.length - 1 && startsWith(f, path)),
  );
}

function routeSecrets(route: DocumentRoute): FieldPath[] {
  const out: FieldPath[] = [];
  const provider = route.oauth?.provider;
  if (provider !== undefined) {
    for (const [name, settings] of Object.entries(provider)) {
      if (settings?.client_secret !== undefined)
        out.push(['oauth', 'provider', name, 'client_secret']);
    }
  }
  if (route.oidc !== undefined) out.push(['oidc', 'client_secret']);
  if (route.webhook_verification?.secret !== undefined)
    out.push(['webhook_verification', 'secret']);
  for (const module of HEADER_MODULES) {
    for (const name of Object.keys(route[module]?.add ?? {})) {
      if (isCredentialHeader(name)) out.push([module, 'add', name]);
    }
  }
  return out;
}

type DocumentRoute = Extract<DocumentValue, { kind: 'HTTPSEdge' }>['routes'][number];

function uniqueSorted(paths: readonly FieldPath[]): FieldPath[] {
  return paths.length === 0 ? [] : uniquePaths(paths);
}

/**
 * The model each shaped document became: a document kept by a `FileCache` is assembled once, and
 * later builds hand back the same object (completing it again would make it a new one to the
 * planner's memo in all but identity, and costs a tenth of a 10,000-edge build).
 */
const assembled = new WeakMap<ShapedDoc, Assembled>();

type EndpointValue = Extract<DocumentValue, { kind: 'CloudEndpoint' }>;

/**
 * A cloud endpoint in the model: the URL normalised, the default binding filled in, the policy
 * as data, and as sensitive every value read from env or file plus every secret config field of
 * the policy (`client_secret`, `secret`, `server_private_key`), however it was written.
 */
function endpointManifest(
  value: EndpointValue,
  source: Source,
  sensitive: readonly FieldPath[],
  locate: (path: FieldPath) => Position,
): CloudEndpointManifest {
  const url = parseEndpointUrl(value.url);
  // The semantic phase refused every URL with a problem before a document is assembled.
  if ('problem' in url)
    throw new EdgesyncError('ES_INTERNAL', `unchecked endpoint URL ${value.name}`);
  // Alias fields (openid-connect's idle_session_timeout) are sent under the documented name.
  const policy = normalisedPolicy(value.traffic_policy as TrafficPolicyDocument);
  const { bindings, tests, ...rest } = value;
  // zod leaves an absent optional field absent (never `undefined`), as the model requires.
  return Object.assign(rest, {
    ...(tests === undefined
      ? {}
      : {
          tests: tests.map((t, i) => {
            const { line, column } = locate(['tests', i]);
            return { ...t, source: { file: source.file, line, column } };
          }),
        }),
    url: url.url,
    bindings: [bindings?.[0] ?? defaultBinding(url)],
    traffic_policy: policy,
    source,
    sensitive: uniqueSorted([...sensitive, ...policySecretPaths(policy)]),
  }) as CloudEndpointManifest;
}

/** Which list of the set a resource goes in, and the resource. */
interface Assembled {
  /** `tls`, `https`, `bot`, `endpoint`, or a generic kind (`reserved_domain`). */
  readonly kind: string;
  readonly resource: { readonly name: string; readonly source: Source };
}

/** The list of `set` that resources of `kind` (as `Assembled` says it) go in. */
function listOf(set: DesiredSet, kind: string, create: boolean): { name: string }[] | undefined {
  if (kind === 'tls') return set.tlsEdges;
  if (kind === 'https') return set.httpsEdges;
  if (kind === 'endpoint') return set.cloudEndpoints;
  if (kind === 'bot') return set.botUsers;
  if (!create) return set.resources?.[kind];
  set.resources ??= {};
  set.resources[kind] ??= [];
  return set.resources[kind];
}

/**
 * The digest of a resource's write-only values for a writer, the key and the values held in the
 * closure only (never a field anything could print); one HMAC per writer asked about.
 */
function digester(
  key: string,
  writeOnly: readonly FieldRule[],
  fields: Readonly<Record<string, unknown>>,
): (writer: string | undefined) => string {
  const values = Object.fromEntries(writeOnly.map((r) => [r.name, String(fields[r.name])]));
  const known = new Map<string | undefined, string>();
  return (writer) => {
    let digest = known.get(writer);
    if (digest === undefined) {
      digest = writeOnlyDigest(key, values, writer);
      known.set(writer, digest);
    }
    return digest;
  };
}

function assemble(shaped: readonly ShapedDoc[], digestKey: string | undefined): DesiredSet {
  const set: DesiredSet = { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [] };
  for (const d of shaped) {
    const { kind, resource } = assembleDoc(d, digestKey);
    listOf(set, kind, true)?.push(resource);
  }
  const byName = (a: { name: string }, b: { name: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  set.tlsEdges.sort(byName);
  set.httpsEdges.sort(byName);
  set.botUsers.sort(byName);
  set.cloudEndpoints.sort(byName);
  for (const list of Object.values(set.resources ?? {})) list.sort(byName);
  return set;
}

/**
 * `last` with the resources of the documents `gone` taken out and those of `shaped` (the changed
 * files' documents now) put in their places by name: what `assemble` makes of every document, at
 * the cost of the change (names are unique per list in a set without findings).
 */
function patched(
  last: DesiredSet,
  gone: readonly ShapedDoc[],
  shaped: readonly ShapedDoc[],
  digestKey: string | undefined,
): DesiredSet {
  // Each list copied, with what it was copied from and what moved in it (`madeInPlace`).
  const moves = new Map<readonly unknown[], ListMoves>();
  const copy = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    moves.set(out, { from: list, removed: [], added: [] });
    return out;
  };
  const set: DesiredSet = {
    tlsEdges: copy(last.tlsEdges),
    httpsEdges: copy(last.httpsEdges),
    botUsers: copy(last.botUsers),
    cloudEndpoints: copy(last.cloudEndpoints),
  };
  if (last.resources !== undefined) {
    set.resources = Object.fromEntries(
      Object.entries(last.resources).map(([kind, list]) => [kind, copy(list)]),
    );
  }
  for (const d of gone) {
    // A document never assembled (its file had findings meanwhile) is in no set.
    const known = assembled.get(d);
    if (known === undefined) continue;
    const list = listOf(set, known.kind, false);
    if (list === undefined) continue;
    const at = nameIndex(list, known.resource.name);
    let removed = false;
    if (list[at] === known.resource) removed = list.splice(at, 1).length > 0;
    else {
      const found = list.indexOf(known.resource);
      if (found >= 0) removed = list.splice(found, 1).length > 0;
    }
    if (removed) moves.get(list)?.removed.push(known.resource.name);
  }
  for (const d of shaped) {
    const { kind, resource } = assembleDoc(d, digestKey);
    const list = listOf(set, kind, true) as { name: string }[];
    let at = nameIndex(list, resource.name);
    while (at < list.length && (list[at] as { name: string }).name <= resource.name) at += 1;
    list.splice(at, 0, resource);
    moves.get(list)?.added.push(resource);
  }
  for (const [list, moved] of moves) inPlace(moved, list as readonly { name: string }[]);
  for (const [kind, list] of Object.entries(set.resources ?? {})) {
    if (list.length === 0) delete set.resources?.[kind];
  }
  if (set.resources !== undefined && Object.keys(set.resources).length === 0) delete set.resources;
  return set;
}

/** What `patched` did to one list it copied. */
interface ListMoves {
  readonly from: readonly unknown[];
  /** The names of the resources taken out, and the resources put in. */
  readonly removed: string[];
  readonly added: { readonly name: string }[];
}

/**
 * Records `list` as made in place from the list it was copied from when the resources taken out
 * and those put in have the same names: the names are unique in a list and it is sorted by
 * name, so every other resource is in its place still, and the new ones in those of theirs.
 */
function inPlace(moved: ListMoves, list: readonly { readonly name: string }[]): void {
  const { from, removed, added } = moved;
  if (list.length !== from.length || removed.length !== added.length) return;
  const names = added.map((r) => r.name).sort();
  if (!removed.sort().every((name, i) => name === names[i])) return;
  const at: number[] = [];
  for (const r of added) {
    const i = nameIndex(list, r.name);
    // A name twice (never in a set without findings): not vouched for.
    if (list[i] !== r || (list[i + 1] as { name: string } | undefined)?.name === r.name) return;
    at.push(i);
  }
  madeInPlace(from, list, at);
}

/** The first place in `list` (sorted by name) whose name is not below `name`. */
function nameIndex(list: readonly { readonly name: string }[], name: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as { name: string }).name < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Adds `source` and `sensitive` to a shaped value (a fresh object from zod, owned here, so it is
 * completed in place rather than copied), once: a document kept by a `FileCache` hands back the
 * same object in every later build.
 */
function assembleDoc(d: ShapedDoc, digestKey: string | undefined): Assembled {
  const known = assembled.get(d);
  if (known !== undefined) return known;
  const made = makeResource(d, digestKey);
  assembled.set(d, made);
  return made;
}

function makeResource(d: ShapedDoc, digestKey: string | undefined): Assembled {
  const source: Source = { file: d.file, line: d.doc.start.line, column: d.doc.start.column };
  const value = d.value;
  const generic = genericKindOf(value.kind);
  if (generic !== undefined) {
    const writeOnly = writeOnlyRules(value.kind);
    const fields = value as unknown as Record<string, unknown>;
    const resource: Declared = Object.assign(value as object, {
      source,
      sensitive: uniqueSorted(d.sensitive),
      ...(writeOnly.length === 0 ||
      digestKey === undefined ||
      writeOnly.some((r) => fields[r.name] === undefined)
        ? {}
        : { digestFor: digester(digestKey, writeOnly, fields) }),
    }) as unknown as Declared;
    return { kind: generic.kind, resource: resource as unknown as Assembled['resource'] };
  }
  if (value.kind === 'TLSEdge') {
    const edge: TlsEdgeManifest = Object.assign(value, {
      source,
      sensitive: uniqueSorted(d.sensitive),
    });
    return { kind: 'tls', resource: edge };
  }
  if (isServiceUser(value)) {
    const bot: BotUserManifest = Object.assign(value, {
      source,
      sensitive: uniqueSorted(d.sensitive),
    });
    return { kind: 'bot', resource: bot };
  }
  if (value.kind === 'CloudEndpoint') {
    const endpoint = endpointManifest(value, source, d.sensitive, (path) => d.doc.locate(path));
    return { kind: 'endpoint', resource: endpoint };
  }
  const routes: RouteManifest[] = value.routes.map((route, r) => {
    const own = d.sensitive.filter((p) => p[0] === 'routes' && p[1] === r).map((p) => p.slice(2));
    const secrets = routeSecrets(route);
    return Object.assign(route, {
      source: { file: d.file, ...d.doc.locate(['routes', r]) },
      sensitive: own.length === 0 && secrets.length === 0 ? [] : uniqueSorted([...own, ...secrets]),
    });
  });
  const edge: HttpsEdgeManifest = Object.assign(value, {
    routes,
    source,
    sensitive: uniqueSorted(d.sensitive.filter((p) => p[0] !== 'routes')),
  });
  return { kind: 'https', resource: edge };
}
