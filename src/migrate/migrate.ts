/**
 * A whole manifest set -> the migrated set: every edge becomes its endpoints (`translateEdge`),
 * bot users are copied as written, and each source file becomes one output file of the same
 * relative path, in the same document order. Pure: the command reads and writes. The output is a
 * function of the input alone, so a second migration of the same set writes the same bytes.
 */
import { Document } from 'yaml';
import type { Diagnostic } from '../errors.js';
import { formatDiagnostic, sortDiagnostics } from '../manifest/diagnostics.js';
import type { BackendMap, CloudEndpointDoc, EdgeInput } from './translate.js';
import { translateEdge } from './translate.js';

/** One document of a source file, in file order. */
export type SourceDocument =
  | { readonly kind: 'edge'; readonly input: EdgeInput }
  | { readonly kind: 'copy'; readonly raw: unknown };

export interface SourceFileDocs {
  /** Relative to the manifest directory, `/`-separated. */
  readonly file: string;
  readonly documents: readonly SourceDocument[];
}

export interface Migration {
  /** Output files by relative path (nothing to write when `diagnostics` hold an error). */
  readonly files: ReadonlyMap<string, string>;
  readonly diagnostics: readonly Diagnostic[];
  readonly counts: { edges: number; endpoints: number; copied: number };
}

export interface MigrateOptions {
  readonly backends: BackendMap;
  /** Write despite warnings, each acknowledged in a comment above its endpoint. */
  readonly allowLossy: boolean;
}

export function migrateSet(files: readonly SourceFileDocs[], options: MigrateOptions): Migration {
  const diagnostics: Diagnostic[] = [];
  const names = new Map<string, string>();
  const counts = { edges: 0, endpoints: 0, copied: 0 };
  const out = new Map<string, string>();
  for (const { file, documents } of files) {
    const docs: Document[] = [];
    for (const document of documents) {
      if (document.kind === 'copy') {
        docs.push(new Document(document.raw));
        counts.copied += 1;
        continue;
      }
      counts.edges += 1;
      const { endpoints, diagnostics: found } = translateEdge(document.input, options.backends);
      diagnostics.push(...found, ...duplicateNames(endpoints, document.input, names));
      const warnings = found.filter((d) => d.severity === 'warning');
      for (const endpoint of endpoints) {
        docs.push(endpointDocument(endpoint, file, options.allowLossy ? warnings : []));
        counts.endpoints += 1;
      }
    }
    if (docs.length > 0) out.set(file, render(file, docs));
  }
  const sorted = sortDiagnostics(diagnostics);
  const blocked = sorted.some((d) => d.severity === 'error' || !options.allowLossy);
  return { files: blocked ? new Map() : out, diagnostics: sorted, counts };
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

function endpointDocument(
  endpoint: CloudEndpointDoc,
  file: string,
  acknowledged: readonly Diagnostic[],
): Document {
  const doc = new Document(endpoint);
  if (acknowledged.length > 0) {
    doc.commentBefore = [
      ' Lossy translation, acknowledged with --allow-lossy:',
      ...sortDiagnostics(acknowledged).map((d) => ` - ${formatDiagnostic({ ...d, file })}`),
    ].join('\n');
  }
  return doc;
}

function render(file: string, docs: readonly Document[]): string {
  const header = `# Migrated by edgesync from ${file}: cloud endpoints replace its edges. Review before applying.\n`;
  const body = docs.map((doc) => doc.toString({ lineWidth: 0 })).join('---\n');
  return header + body;
}
