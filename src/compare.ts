/**
 * The one string order of the project: by UTF-16 code unit, the same on every machine and
 * locale (never `localeCompare`), so listings, plans and files sort deterministically. Pure.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
