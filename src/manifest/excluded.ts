/**
 * What the files `--exclude` skips still declare. Excluding a file means "do not manage it
 * here", never "its resources are gone": each excluded manifest file is read for the kind and
 * name of its documents only (nothing validated, no reference resolved), and the plan leaves
 * every live edge and cloud endpoint of those names alone. A document too broken to give its
 * kind and name (a YAML error, a template) declares nothing; a file that cannot be read at all
 * makes every declaration unknown (`unreadable`), and the plan then deletes nothing. Pure.
 */
import { KINDS, type Kind, NAME_PATTERN } from './modules.js';
import { parseYaml } from './yaml.js';

/** A resource an excluded file declares: left alone by the plan (never deleted for it). */
export interface ExcludedResource {
  readonly kind: Kind;
  readonly name: string;
  /** The excluded file, relative to the manifest directory, `/`-separated. */
  readonly file: string;
}

export interface ExcludedDeclarations {
  /** Sorted by file, then by position in it. */
  readonly declared: readonly ExcludedResource[];
  /** Excluded files or directories that could not be read: what they declare is unknown. */
  readonly unreadable: readonly string[];
}

/** The kind and name of every document of `text` (an excluded file) that states both. */
export function declaredIn(file: string, text: string, maxAliasCount: number): ExcludedResource[] {
  const out: ExcludedResource[] = [];
  for (const doc of parseYaml(text, { maxAliasCount }).documents) {
    const value = doc.value as { kind?: unknown; name?: unknown } | null;
    if (typeof value !== 'object' || value === null) continue;
    const { kind, name } = value;
    if (!KINDS.includes(kind as Kind) || typeof name !== 'string' || !NAME_PATTERN.test(name)) {
      continue;
    }
    out.push({ kind: kind as Kind, name, file });
  }
  return out;
}
