/** In-memory manifest sets for the pure pipeline: files as text, env and referenced files as maps. */
import path from 'node:path';
import { type BuildResult, buildDesiredSet } from '../../../src/manifest/build.js';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import type { RefReader } from '../../../src/manifest/refs.js';

export interface MemoryOptions {
  readonly env?: Record<string, string>;
  /** Referenced files, by path relative to the manifest root. */
  readonly refFiles?: Record<string, string>;
  readonly owner?: string;
  readonly maxFileBytes?: number;
  readonly maxAliasCount?: number;
}

export function memoryReader(options: MemoryOptions = {}): RefReader {
  return {
    env: (name) => options.env?.[name],
    file: (fromFile, ref) => {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), ref));
      const text = options.refFiles?.[target];
      return text === undefined
        ? { ok: false, message: `file ${ref} not found` }
        : { ok: true, text };
    },
  };
}

export function buildFrom(
  files: Record<string, string | Uint8Array>,
  options: MemoryOptions = {},
): BuildResult {
  const encoder = new TextEncoder();
  return buildDesiredSet(
    Object.entries(files).map(([file, content]) => ({
      file,
      bytes: typeof content === 'string' ? encoder.encode(content) : content,
    })),
    {
      reader: memoryReader(options),
      ...(options.owner === undefined ? {} : { owner: options.owner }),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
      ...(options.maxAliasCount === undefined ? {} : { maxAliasCount: options.maxAliasCount }),
    },
  );
}

/** The diagnostics of a build, as the text lines users see. */
export function errorLines(result: BuildResult): string[] {
  return result.diagnostics.map(formatDiagnostic);
}
