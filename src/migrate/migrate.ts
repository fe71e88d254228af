/**
 * A whole manifest set -> the migrated set: every edge becomes its endpoints (`translateEdge`),
 * bot users are copied as written, and each source file becomes one output file of the same
 * relative path, in the same document order. A file without edges is copied byte for byte; in a
 * file with edges the other documents keep the comments yaml's Document carries. Pure: the
 * command reads and writes. The output is a function of the input alone, so a second migration
 * of the same set writes the same bytes.
 */
import { Document } from 'yaml';
import type { Diagnostic } from '../errors.js';
import { domainReferences } from '../kinds/own-planners.js';
import { coveringDomains, domainProblem, isWildcardDomain } from '../kinds/reserved-domain.js';
import { formatDiagnostic, sortDiagnostics } from '../manifest/diagnostics.js';
import { edgeCases } from './cases.js';
import type { BackendMap, CloudEndpointDoc, EdgeInput } from './translate.js';
import { translateEdge } from './translate.js';

/** One document of a source file, in file order. */
export type SourceDocument =
  | { readonly kind: 'edge'; readonly input: EdgeInput }
  | { readonly kind: 'copy'; readonly document: Document };

export interface SourceFileDocs {
  /** Relative to the manifest directory, `/`-separated. */
  readonly file: string;
  /** The file's text, written unchanged when it holds no edge. */
  readonly text: string;
  readonly documents: readonly SourceDocument[];
}

export interface Migration {
  /** Output files by relative path (nothing to write when `diagnostics` hold an error). */
  readonly files: ReadonlyMap<string, string>;
  readonly diagnostics: readonly Diagnostic[];
  readonly counts: { edges: number; endpoints: number; copied: number; domains: number };
}

export interface MigrateOptions {
  readonly backends: BackendMap;
  /** Write despite warnings, each acknowledged in a comment above its endpoint. */
  readonly allowLossy: boolean;
}

export function migrateSet(files: readonly SourceFileDocs[], options: MigrateOptions): Migration {
  const diagnostics: Diagnostic[] = [];
  const names = new Map<string, string>();
  const counts = { edges: 0, endpoints: 0, copied: 0, domains: 0 };
  const out = new Map<string, string>();
  // The reserved domains the set declares already, and those written for the endpoints.
  const reserved = new Set(declaredDomains(files));
  for (const { file, text, documents } of files) {
    if (documents.every((d) => d.kind === 'copy')) {
      counts.copied += documents.length;
      if (documents.length > 0) out.set(file, text);
      continue;
    }
    const docs: Document[] = [];
    // Warnings of edges with no endpoint to carry them: acknowledged at the top of the file.
    const unplaced: Diagnostic[] = [];
    for (const document of documents) {
      if (document.kind === 'copy') {
        docs.push(document.document);
        counts.copied += 1;
        continue;
      }
      counts.edges += 1;
      const { endpoints, diagnostics: found } = translateEdge(document.input, options.backends);
      diagnostics.push(...found, ...duplicateNames(endpoints, document.input, names));
      const warnings = options.allowLossy ? found.filter((d) => d.severity === 'warning') : [];
      if (endpoints.length === 0) unplaced.push(...warnings);
      for (const endpoint of endpoints) {
        const domain = domainFor(endpoint, reserved);
        if (domain !== undefined) {
          docs.push(domain);
          counts.domains += 1;
        }
        // What the edge did, for `edgesync test` to hold the translated policy to.
        const tests = edgeCases(document.input, endpoint.url, options.backends);
        if (tests.length > 0) endpoint.tests = tests;
        docs.push(endpointDocument(endpoint, file, warnings));
        counts.endpoints += 1;
      }
    }
    out.set(file, render(file, docs, unplaced));
  }
  const sorted = sortDiagnostics(diagnostics);
  const blocked = sorted.some((d) => d.severity === 'error' || !options.allowLossy);
  return { files: blocked ? new Map() : out, diagnostics: sorted, counts };
}

/** The `domain` of every `ReservedDomain` document the set holds (copied as it is). */
function declaredDomains(files: readonly SourceFileDocs[]): string[] {
  return files.flatMap((f) =>
    f.documents.flatMap((d) => {
      if (d.kind !== 'copy' || d.document.get('kind') !== 'ReservedDomain') return [];
      const domain = d.document.get('domain');
      return typeof domain === 'string' ? [domain] : [];
    }),
  );
}

/**
 * The `ReservedDomain` document a public endpoint's host needs, unless one the set declares, or
 * one written already, serves it (the host itself or a wildcard above it); it is written before
 * the endpoint. No `id:`: a reservation is matched by its host name, so the one the edge used is
 * adopted as it is (never re-created, never deleted).
 */
function domainFor(endpoint: CloudEndpointDoc, reserved: Set<string>): Document | undefined {
  const [ref] = domainReferences({ url: endpoint.url });
  if (ref === undefined || coveringDomains(ref.name).some((d) => reserved.has(d))) return undefined;
  // A host the service cannot reserve (under a private TLD such as `.example`) has no
  // reservation to adopt: none is written (the service would refuse the endpoint too).
  if (domainProblem(ref.name) !== undefined) return undefined;
  reserved.add(ref.name);
  const name = isWildcardDomain(ref.name) ? `wildcard${ref.name.slice(1)}` : ref.name;
  const doc = new Document({
    kind: 'ReservedDomain',
    name: name.slice(0, 63).replace(/[^a-z0-9]+$/, ''),
    domain: ref.name,
  });
  doc.commentBefore = [
    ' The reservation the edge used, adopted by its host name (a new one waits for its DNS).',
    ' Never deleted unless ensure: absent says so.',
  ].join('\n');
  return doc;
}

function duplicateNames(
  endpoints: readonly CloudEndpointDoc[],
  input: EdgeInput,
  names: Map<string, string>,
): Diagnostic[] {
  return endpoints.flatMap((endpoint) => {
    const holder = names.get(endpoint.name);
    names.set(endpoint.name, input.edge.name);
    if (holder === undefined) return [];
    return [
      {
        ...input.source.locate(['name']),
        path: 'name',
        severity: 'error' as const,
        message: `the endpoint name "${endpoint.name}" is also made from edge ${holder}: rename one of the edges`,
      },
    ];
  });
}

/** The comment lines (without `#`) that acknowledge lossy translations, or none. */
function acknowledgement(file: string, acknowledged: readonly Diagnostic[]): string[] {
  if (acknowledged.length === 0) return [];
  return [
    ' Lossy translation, acknowledged with --allow-lossy:',
    ...sortDiagnostics(acknowledged).map((d) => ` - ${formatDiagnostic({ ...d, file })}`),
  ];
}

function endpointDocument(
  endpoint: CloudEndpointDoc,
  file: string,
  acknowledged: readonly Diagnostic[],
): Document {
  const doc = new Document(endpoint);
  const lines = acknowledgement(file, acknowledged);
  if (lines.length > 0) doc.commentBefore = lines.join('\n');
  return doc;
}

function render(file: string, docs: readonly Document[], unplaced: readonly Diagnostic[]): string {
  const header = [
    `# Migrated by edgesync from ${file}: cloud endpoints replace its edges. Review before applying.`,
    ...acknowledgement(file, unplaced).map((line) => `#${line}`),
  ].join('\n');
  const body = docs.map((doc) => doc.toString({ lineWidth: 0 })).join('---\n');
  return `${header}\n${body}`;
}
