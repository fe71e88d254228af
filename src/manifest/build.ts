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
import type { Declared, FieldRule } from '../kinds/definition.js';
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
import { checkAcrossDocuments, checkWithinDocuments, type DocumentValue } from './semantics.js';
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
  | { readonly file: string; readonly text: string | { readonly error: string } };

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

/**
 * Each file's shape-phase result by path, with a digest of the text it came from. Only files
 * whose result depends on nothing but their text are kept: no `{ env }` / `{ file }` reference,
 * no diagnostic. One cache serves one set of build options (owner, alias bound). A kept result
 * holds neither the text nor the parse (see `processFile`): a diagnostic about a kept document
 * (a name another file now repeats) is located from the positions it kept.
 */
export class FileCache {
  readonly #files = new Map<string, { readonly digest: string; readonly result: FileResult }>();

  get size(): number {
    return this.#files.size;
  }

  /** The kept result of `file` if it was built from the text with this digest. */
  lookup(file: string, digest: string): FileResult | undefined {
    const hit = this.#files.get(file);
    return hit !== undefined && hit.digest === digest ? hit.result : undefined;
  }

  /**
   * Keeps `result` (its documents' positions only: `processFile`) when it depends on nothing but its text and had no
   * diagnostic, of its shape (in `result`) or of its documents' own rules (`ownIssues`).
   */
  store(file: string, digest: string, result: FileResult, ownIssues: number): void {
    const standalone =
      ownIssues === 0 &&
      result.diagnostics.length === 0 &&
      result.partials.length === 0 &&
      result.deferred.length === 0 &&
      // Values read from env or file can change under an unchanged text; secrets written inline
      // (a policy's secret config fields, in `secrets` for masking only) cannot.
      result.shaped.every((d) => d.sensitive.length === 0);
    if (standalone) this.#files.set(file, { digest, result });
    else this.#files.delete(file);
  }

  /** Forgets every file not in `files` (removed since). */
  retain(files: ReadonlySet<string>): void {
    for (const file of this.#files.keys()) if (!files.has(file)) this.#files.delete(file);
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
  const shaped: ShapedDoc[] = [];
  const partials: ShapedDoc[] = [];
  const deferred: DeferredCheck[] = [];

  const ordered = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  for (const source of ordered) {
    const text = 'text' in source ? source.text : decode(source.bytes, maxFileBytes);
    if (typeof text !== 'string') {
      diagnostics.push(fileProblem(source.file, text.error));
      continue;
    }
    const cached = options.cache && { cache: options.cache, digest: textDigest(text) };
    let result = cached?.cache.lookup(source.file, cached.digest);
    if (result === undefined) {
      // The documents' own rules while each one's parse is at hand; then the parse goes,
      // document by document (see `processFile`).
      const done = processFile(source.file, text, options.reader, {
        maxAliasCount,
        ownRules: (d) => located([d], checkWithinDocuments, owner, options.policyTests ?? true),
      });
      result = done.result;
      semantic.push(...done.own);
      cached?.cache.store(source.file, cached.digest, result, done.own.length);
    }
    diagnostics.push(...result.diagnostics);
    counts.documents += result.kinds.length;
    for (const kind of result.kinds) {
      if (kind === 'TLSEdge') counts.tls_edges += 1;
      else if (kind === 'HTTPSEdge') counts.https_edges += 1;
      else if (isServiceUserKind(kind)) counts.bot_users += 1;
      else if (kind === 'CloudEndpoint') counts.cloud_endpoints += 1;
      else {
        const generic = kind === undefined ? undefined : genericKindOf(kind);
        if (generic !== undefined) counts[generic.plural] = (counts[generic.plural] ?? 0) + 1;
      }
    }
    for (const d of result.shaped) {
      if (d.value.kind === 'HTTPSEdge') counts.routes += d.value.routes.length;
      shaped.push(d);
    }
    for (const d of result.partials) {
      // A document only missing a deferred value is whole as written: its routes count.
      if (d.deferred !== undefined && d.value.kind === 'HTTPSEdge' && d.partial !== undefined) {
        counts.routes += d.partial.routeIndex.length;
        counts.routes += d.partial.pruned.filter((p) => p[0] === 'routes' && p.length === 2).length;
      }
      partials.push(d);
    }
    deferred.push(...result.deferred);
  }
  options.cache?.retain(new Set(files.map((f) => f.file)));

  // Documents with shape errors take part as far as they parsed: both phases in one run.
  const checked = [...shaped, ...partials];
  semantic.push(...acrossDocuments(checked, owner));
  diagnostics.push(...writeOnlyIssues(checked, options));
  const secrets = checked.flatMap((d) => d.secrets);
  for (const d of semantic) {
    diagnostics.push(secrets.length === 0 ? d : { ...d, message: maskValues(d.message, secrets) });
  }

  if (diagnostics.length > 0) {
    return { ok: false, diagnostics: sortDiagnostics(diagnostics), counts, deferred };
  }
  const key =
    options.digestKey !== undefined && 'key' in options.digestKey
      ? options.digestKey.key
      : undefined;
  return { ok: true, set: assemble(shaped, key), diagnostics: [], counts, deferred };
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
  const out: Diagnostic[] = [];
  for (const issue of issues) {
    const d = docs[issue.doc] as ShapedDoc;
    const path = written(d, issue.path);
    if (d.partial !== undefined && aboutPruned(d.partial, path)) continue;
    if (d.deferred !== undefined && aboutDeferred(d.deferred, path)) continue;
    const { line, column } = position(d, issue.path, issue.anchor);
    out.push({
      file: d.file,
      line,
      column,
      path: formatPath(issue.anchor === 'key' ? path.slice(0, -1) : path),
      message: issue.message,
      severity: 'error',
    });
  }
  return out;
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

/** The rules across the whole set (names, IDs, hostports: positions every kept document has). */
function acrossDocuments(docs: readonly ShapedDoc[], owner: string): Diagnostic[] {
  return located(docs, checkAcrossDocuments, owner);
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
 * Adds `source` and `sensitive` to the shaped values (fresh objects from zod, owned here, so
 * they are completed in place rather than copied) and sorts each kind by name.
 */
/**
 * The model each shaped document became: a document kept by a `FileCache` is assembled once, and
 * later builds hand back the same object (completing it again would make it a new one to the
 * planner's memo in all but identity, and costs a tenth of a 10,000-edge build).
 */
const assembled = new WeakMap<
  ShapedDoc,
  {
    /** `tls`, `https`, `bot`, `endpoint`, or a generic kind (`reserved_domain`). */
    readonly kind: string;
    readonly resource: object;
  }
>();

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

/** Adds a resource of a kind planned generically to the set. */
function declare(set: DesiredSet, kind: string, resource: Declared): void {
  set.resources ??= {};
  const list = set.resources[kind];
  if (list === undefined) set.resources[kind] = [resource];
  else list.push(resource);
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
    const known = assembled.get(d);
    if (known !== undefined) {
      if (known.kind === 'tls') set.tlsEdges.push(known.resource as TlsEdgeManifest);
      else if (known.kind === 'https') set.httpsEdges.push(known.resource as HttpsEdgeManifest);
      else if (known.kind === 'endpoint')
        set.cloudEndpoints.push(known.resource as CloudEndpointManifest);
      else if (known.kind === 'bot') set.botUsers.push(known.resource as BotUserManifest);
      else {
        declare(set, known.kind, known.resource as Declared);
      }
      continue;
    }
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
      declare(set, generic.kind, resource);
      assembled.set(d, { kind: generic.kind, resource });
      continue;
    }
    if (value.kind === 'TLSEdge') {
      const edge: TlsEdgeManifest = Object.assign(value, {
        source,
        sensitive: uniqueSorted(d.sensitive),
      });
      set.tlsEdges.push(edge);
      assembled.set(d, { kind: 'tls', resource: edge });
    } else if (isServiceUser(value)) {
      const bot: BotUserManifest = Object.assign(value, {
        source,
        sensitive: uniqueSorted(d.sensitive),
      });
      set.botUsers.push(bot);
      assembled.set(d, { kind: 'bot', resource: bot });
    } else if (value.kind === 'CloudEndpoint') {
      const endpoint = endpointManifest(value, source, d.sensitive, (path) => d.doc.locate(path));
      set.cloudEndpoints.push(endpoint);
      assembled.set(d, { kind: 'endpoint', resource: endpoint });
    } else {
      const routes: RouteManifest[] = value.routes.map((route, r) => {
        const own = d.sensitive
          .filter((p) => p[0] === 'routes' && p[1] === r)
          .map((p) => p.slice(2));
        const secrets = routeSecrets(route);
        return Object.assign(route, {
          source: { file: d.file, ...d.doc.locate(['routes', r]) },
          sensitive:
            own.length === 0 && secrets.length === 0 ? [] : uniqueSorted([...own, ...secrets]),
        });
      });
      const edge: HttpsEdgeManifest = Object.assign(value, {
        routes,
        source,
        sensitive: uniqueSorted(d.sensitive.filter((p) => p[0] !== 'routes')),
      });
      set.httpsEdges.push(edge);
      assembled.set(d, { kind: 'https', resource: edge });
    }
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
