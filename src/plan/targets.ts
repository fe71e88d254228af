/**
 * `--target ADDRESS`: which resources a plan is narrowed to (`PlanOptions.targets`). A target
 * is a resource's address as plans show it: `tls_edge.NAME`, `https_edge.NAME`,
 * `cloud_endpoint.NAME`, `bot_user.NAME`; a route's (`https_edge.NAME.route["/api"]`) or a bot
 * user namesake's (`bot_user.ci#bot_2`) stands for the resource it belongs to, which is planned
 * whole (a route is created and updated with its edge). Pure.
 */
import type { DesiredSet } from '../manifest/schema.js';
import { botUserAddress } from './bot-users.js';
import { endpointAddress } from './cloud-endpoints.js';
import type { Plan } from './model.js';
import { edgeAddress } from './ownership.js';

/** The kinds a target may name, as the first part of an address. */
export const TARGET_KINDS = ['tls_edge', 'https_edge', 'cloud_endpoint', 'bot_user'] as const;

export type TargetResult =
  | { readonly ok: true; readonly targets: ReadonlySet<string> }
  | { readonly ok: false; readonly problem: string };

/** The resource addresses `requested` names, or why one of them is not an address. */
export function resolveTargets(requested: readonly string[]): TargetResult {
  const targets = new Set<string>();
  for (const text of requested) {
    // A name may hold dots (`https_edge.api.v2`); a route's part and a namesake's ID do not
    // belong to it.
    const m = /^([a-z_]+)\.(.+?)(?:\.route\[".*"\]|#[^#]+)?$/s.exec(text.trim());
    const kind = m?.[1];
    if (m === null || kind === undefined || !(TARGET_KINDS as readonly string[]).includes(kind)) {
      return {
        ok: false,
        problem: `--target ${JSON.stringify(text)}: expected a resource address such as https_edge.NAME (kinds: ${TARGET_KINDS.join(', ')})`,
      };
    }
    targets.add(`${kind}.${m[2]}`);
  }
  return { ok: true, targets };
}

/** The addresses a target may name: every resource of the manifests and of the plan. */
export function targetedAddresses(desired: DesiredSet, plan: Plan): Set<string> {
  const known = new Set<string>();
  for (const e of desired.tlsEdges) known.add(edgeAddress('tls_edge', e.name));
  for (const e of desired.httpsEdges) known.add(edgeAddress('https_edge', e.name));
  for (const e of desired.cloudEndpoints) known.add(endpointAddress(e.name));
  for (const b of desired.botUsers) known.add(botUserAddress(b.name));
  for (const item of [...plan.changes, ...plan.blocked]) {
    const resolved = resolveTargets([item.address]);
    if (resolved.ok) for (const t of resolved.targets) known.add(t);
  }
  return known;
}

/** Targets that name no resource of the manifests or the plan: a mistyped one plans nothing. */
export function unknownTargets(targets: ReadonlySet<string>, known: ReadonlySet<string>): string[] {
  return [...targets].filter((t) => !known.has(t));
}
