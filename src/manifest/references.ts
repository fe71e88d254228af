/**
 * The references by name a manifest document makes to other kinds' resources (`{ ref: corp-ca }`
 * in a cloud endpoint's policy), as its kind's definition finds them (`KindDefinition.references`):
 * checked across the set by ./semantics.ts, their positions kept by ./shape.ts so a finding is
 * located once the document's parse is gone.
 */
import { type Declared, kindOfManifest, type Reference } from '../kinds/index.js';

/** The references of a shaped document (none for a kind that makes none). */
export function documentReferences(value: { readonly kind: string }): readonly Reference[] {
  return kindOfManifest(value.kind)?.references?.(value as unknown as Declared) ?? [];
}
