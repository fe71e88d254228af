/**
 * An account without access to edges has none, and can have none: its cloud endpoints and bot
 * users are planned as on any account, but a directory that declares edges cannot be realised
 * there. Planning it against the empty edge lists would show creates the API refuses one by one,
 * so the whole directory is refused before anything is written, naming the edges' files.
 */
import type { LiveSnapshot } from '../api/observe.js';
import { compareCodeUnits } from '../compare.js';
import { EdgesyncError } from '../errors.js';
import type { DesiredSet } from '../manifest/schema.js';
import { edgeAddress } from '../plan/ownership.js';

/** Throws `ES_ACCOUNT_STATE` when `live` has no access to edges and `desired` declares some. */
export function assertEdgesAvailable(
  desired: DesiredSet,
  live: Pick<LiveSnapshot, 'edgesUnavailable'>,
): void {
  if (live.edgesUnavailable !== true) return;
  const edges = [
    ...desired.tlsEdges.map((e) => ({ address: edgeAddress('tls_edge', e.name), at: e.source })),
    ...desired.httpsEdges.map((e) => ({
      address: edgeAddress('https_edge', e.name),
      at: e.source,
    })),
  ].sort((a, b) => compareCodeUnits(a.at.file, b.at.file) || a.at.line - b.at.line);
  if (edges.length === 0) return;
  const where = edges.map((e) => `${e.at.file}:${e.at.line}:${e.at.column} (${e.address})`);
  throw new EdgesyncError(
    'ES_ACCOUNT_STATE',
    `the account has no access to edges (the API refuses its edge lists), but the manifests declare ${edges.length === 1 ? 'an edge' : `${edges.length} edges`}: ${where.join(', ')}. Nothing was written; remove the edge manifests (or migrate them to cloud endpoints with "edgesync migrate"), or use an API key of an account with edges`,
  );
}
