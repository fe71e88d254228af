/**
 * The cut-over from edges to cloud endpoints, as the plan lists it: each edge being deleted
 * whose hosts and ports cloud endpoints of the plan claim, with those endpoints, in the order
 * the executor runs them (by the edge's address, as the plan's changes). Pure.
 */
import { compareCodeUnits } from '../compare.js';
import { normalizeEndpointUrl } from '../manifest/endpoint-url.js';
import type { EndpointPlanInput } from './cloud-endpoints.js';
import type { Cutover } from './model.js';
import type { Orphan } from './ownership.js';

/** The cut-overs of a plan; `deletions` are the edges it deletes. */
export function cutoverList(
  endpoints: readonly EndpointPlanInput[],
  deletions: readonly Orphan[],
): Cutover[] {
  const byEdge = new Map<string, Cutover['endpoints']>();
  for (const e of endpoints) {
    if (e.cutover === undefined || e.hostport === undefined) continue;
    const entry = {
      address: e.match.address,
      url: normalizeEndpointUrl(e.match.desired.url),
      hostport: e.hostport,
    };
    const list = byEdge.get(e.cutover);
    if (list === undefined) byEdge.set(e.cutover, [entry]);
    else list.push(entry);
  }
  const out: Cutover[] = [];
  for (const d of deletions) {
    const list = byEdge.get(d.address);
    if (list === undefined) continue;
    list.sort((a, b) => compareCodeUnits(a.address, b.address));
    out.push({ edge: d.address, id: d.live.record.id, endpoints: list });
  }
  return out.sort((a, b) => compareCodeUnits(a.edge, b.edge));
}
