/**
 * The manifest layer's public surface: load and validate a manifest directory into the
 * DesiredSet (see the model contract in ./schema.ts), format diagnostics, store labels.
 */
export {
  type BuildOptions,
  type BuildResult,
  buildDesiredSet,
  type ResourceCounts,
  type SourceFile,
} from './build.js';
export {
  DIAGNOSTICS_FORMAT_VERSION,
  type Diagnostic,
  formatDiagnostic,
  sortDiagnostics,
} from './diagnostics.js';
export { type LoadOptions, type LoadResult, loadDesiredSet, loadManifests } from './loader.js';
export {
  DEFAULT_OWNER,
  NAME_KEY,
  OWNER_KEY,
  type ParsedMetadata,
  PROTECT_KEY,
  parseStoredMetadata,
  storedMetadata,
  storedRouteMetadata,
} from './metadata.js';
export { type FieldPath, formatPath, type Segment } from './paths.js';
export type { RefReader } from './refs.js';
export * from './schema.js';
