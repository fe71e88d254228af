/**
 * Cloud endpoints: ownership, diff and operations. Pure.
 *
 * - Ownership through `metadata`, as for edges: a live endpoint is ours when it is of type
 *   `cloud` and its `edgesync/owner` is our owner id; matched to manifests by `edgesync/name`
 *   (several owned with one name: the oldest is kept, the others deleted as duplicates). Agent
 *   endpoints, other owners' and unowned endpoints are never diffed nor touched.
 * - The policy is compared as data: the live string parsed (JSON, else YAML) against the desired
 *   document, legacy phase names (`inbound`, `outbound`) read as their successors on both sides,
 *   so a converged endpoint stays converged whatever formatting the service returns. It is sent
 *   as `JSON.stringify` of the desired document.
 * - A URL change (normalised forms compared) that keeps the scheme is part of the PATCH: the
 *   service moves an endpoint to another host or port in place, without downtime. A scheme
 *   change is a delete, then a create: a replacement; so is a move that the phases cannot order
 *   as one PATCH (see `patchesUrl`). Anything else is one PATCH with only the fields that
 *   changed; nothing changed is no operation.
 * - `protect: true` (live or desired) forbids the delete of a replacement; an owned endpoint no
 *   manifest keeps goes through the deletion guards with the edges (./guards.ts).
 */
import equal from 'fast-deep-equal';
import type { CloudEndpoint, EndpointCreate, EndpointUpdate } from '../api/schemas.js';
import { compareCodeUnits } from '../compare.js';
import { LEGACY_PHASES, normalisedPolicy } from '../hosted/policy-actions.js';
import type { Declared, Reference, ResolveReference } from '../kinds/index.js';
import { CLOUD_ENDPOINT } from '../kinds/own-planners.js';
import { defaultEndpointBinding, normalizeEndpointUrl } from '../manifest/endpoint-url.js';
import { type ParsedMetadata, recordMetadata, storedMetadata } from '../manifest/metadata.js';
import type { Segment } from '../manifest/paths.js';
import { type FieldPath, uniquePaths } from '../manifest/paths.js';
import { parsePolicyText } from '../manifest/policy-text.js';
import type { CloudEndpointManifest } from '../manifest/schema.js';
import { isSecretField } from '../manifest/secrets.js';
import type { PlanContext } from './context.js';
import { policyChanges, Sensitivity } from './diff.js';
import { impactEntry } from './impact.js';
import type { FieldChange, Operation, Phase } from './model.js';
import { createEndpoint, deleteEndpoint, updateEndpoint } from './operations.js';
import { survivorFirst } from './survivor.js';

export interface LiveEndpoint {
  readonly record: CloudEndpoint;
  readonly meta: ParsedMetadata | undefined;
}

export interface EndpointMatch {
  readonly desired: CloudEndpointManifest;
  readonly address: string;
  /** The owned live endpoint it maps to; undefined means create. */
  readonly live: LiveEndpoint | undefined;
}

export interface EndpointOrphan {
  readonly live: LiveEndpoint;
  readonly address: string;
  readonly reason: string;
}

export function endpointAddress(name: string): string {
  return `cloud_endpoint.${name}`;
}

/** Ours: a cloud endpoint (agents own theirs, whatever their metadata says) of our owner. */
export function ownedEndpoint(record: CloudEndpoint, owner: string): boolean {
  return record.type === 'cloud' && recordMetadata(record)?.owner === owner;
}

/** Manifests matched to our live endpoints, and our live endpoints no manifest keeps. */
export function resolveEndpoints(
  desired: readonly CloudEndpointManifest[],
  live: readonly CloudEndpoint[],
  owner: string,
): { matches: EndpointMatch[]; orphans: EndpointOrphan[] } {
  const byName = new Map<string, LiveEndpoint[]>();
  const orphans: EndpointOrphan[] = [];
  for (const record of live) {
    if (!ownedEndpoint(record, owner)) continue;
    const meta = recordMetadata(record);
    if (meta === undefined) continue;
    if (meta.name === undefined) {
      orphans.push({
        live: { record, meta },
        address: `cloud_endpoint#${record.id}`,
        reason: 'owned endpoint without an edgesync/name: no manifest can keep it',
      });
      continue;
    }
    const list = byName.get(meta.name);
    if (list === undefined) byName.set(meta.name, [{ record, meta }]);
    else list.push({ record, meta });
  }
  for (const list of byName.values()) if (list.length > 1) list.sort(byAge);
  const matches: EndpointMatch[] = [];
  const kept = new Set<string>();
  for (const d of desired) {
    const found = byName.get(d.name)?.[0];
    kept.add(d.name);
    matches.push({ desired: d, address: endpointAddress(d.name), live: found });
  }
  for (const [name, list] of byName) {
    list.forEach((e, i) => {
      if (kept.has(name) && i === 0) return;
      const first = list[0] as LiveEndpoint;
      orphans.push(
        kept.has(name) || i > 0
          ? {
              live: e,
              address: `${endpointAddress(name)}#${e.record.id}`,
              reason: `duplicate of ${first.record.id} (same edgesync/name; the oldest is kept)`,
            }
          : { live: e, address: endpointAddress(name), reason: 'manifest removed' },
      );
    });
  }
  return { matches, orphans };
}

function byAge(a: LiveEndpoint, b: LiveEndpoint): number {
  return survivorFirst(a.record, b.record);
}

// ---- the policy as data ---------------------------------------------------------------------

const LEGACY: Readonly<Record<string, string>> = LEGACY_PHASES;

/** The document with legacy phase names read as their successors (unchanged otherwise). */
export function canonicalPolicy(doc: unknown): unknown {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return doc;
  // An alias field (openid-connect's idle_session_timeout) is its documented name, live too.
  const named = normalisedPolicy(doc);
  if (!Object.keys(named).some((k) => Object.hasOwn(LEGACY, k))) return named;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(named)) out[LEGACY[key] ?? key] = value;
  return out;
}

/** Parsed live policies, per record: the daemon keeps its records between cycles. */
const livePolicies = new WeakMap<CloudEndpoint, { readonly doc: unknown }>();
/** Canonical desired policies, per manifest object (the daemon's manifests are kept too). */
const desiredPolicies = new WeakMap<object, unknown>();

/** The live policy as data (undefined when absent or not a document). */
export function livePolicy(record: CloudEndpoint): unknown {
  let known = livePolicies.get(record);
  if (known === undefined) {
    known = { doc: canonicalPolicy(parsePolicyText(record.traffic_policy ?? '')) };
    livePolicies.set(record, known);
  }
  return known.doc;
}

function desiredPolicy(m: CloudEndpointManifest): unknown {
  if (!desiredPolicies.has(m.traffic_policy)) {
    desiredPolicies.set(m.traffic_policy, canonicalPolicy(m.traffic_policy));
  }
  return desiredPolicies.get(m.traffic_policy);
}

// ---- diff -------------------------------------------------------------------------------------

/** The fields edgesync writes on an endpoint, as the service would store them. */
interface EndpointFields {
  readonly url: string;
  readonly description: string;
  readonly metadata: string;
  readonly bindings: readonly string[];
  readonly pooling_enabled: boolean;
}

function desiredFields(ctx: PlanContext, m: CloudEndpointManifest): EndpointFields {
  return {
    url: normalizeEndpointUrl(m.url),
    description: m.description ?? '',
    metadata: storedMetadata(m.metadata, { owner: ctx.owner, name: m.name, protect: m.protect }),
    bindings: [...m.bindings].sort(compareCodeUnits),
    pooling_enabled: m.pooling_enabled,
  };
}

/** A live record with the service's defaults filled in (omitted fields are empty ones). */
function liveFields(r: CloudEndpoint): EndpointFields {
  const bindings = r.bindings === undefined || r.bindings.length === 0 ? undefined : r.bindings;
  return {
    url: normalizeEndpointUrl(r.url),
    description: r.description ?? '',
    metadata: r.metadata ?? '',
    bindings: [...(bindings ?? [defaultEndpointBinding(r.url)])].sort(compareCodeUnits),
    pooling_enabled: r.pooling_enabled ?? false,
  };
}

const SCALARS = ['description', 'metadata', 'bindings', 'pooling_enabled'] as const;

/** True when the document holds a secret field (its value is then masked in request bodies). */
export function hasSecretField(value: unknown, path: Segment[] = []): boolean {
  if (typeof value !== 'object' || value === null) return isSecretField(path);
  if (Array.isArray(value)) return value.some((v, i) => hasSecretField(v, [...path, i]));
  return Object.entries(value).some(([k, v]) => hasSecretField(v, [...path, k]));
}

/**
 * The sensitive paths of an endpoint's request body: the policy travels as one string, so a
 * secret anywhere in it makes the whole `traffic_policy` field sensitive (labels likewise make
 * `metadata` sensitive, see `bodySensitivePaths`).
 */
function bodySensitivity(m: CloudEndpointManifest): FieldPath[] {
  const out = m.sensitive.map((p) => (p[0] === 'traffic_policy' ? POLICY : p));
  if (hasSecretField(m.traffic_policy)) out.push(POLICY);
  return uniquePaths(out);
}

const POLICY: FieldPath = ['traffic_policy'];

// ---- operations -------------------------------------------------------------------------------

export interface EndpointPlanInput {
  readonly match: EndpointMatch;
  /**
   * Roots that release what this endpoint's write claims: edges its host and port, endpoints
   * its URL (./endpoint-claims.ts).
   */
  readonly requires: readonly string[];
  /** The edge being deleted that hands this host and port over (phase `cutover`). */
  readonly cutover?: string | undefined;
  /** The host and port it takes over, with `cutover`. */
  readonly hostport?: string | undefined;
  /** Its old URL is taken by another endpoint: a replacement's DELETE runs in phase `release`. */
  readonly releasesUrl?: boolean;
  /** Roots of resources its policy refers to that this plan creates (see `withReferences`). */
  readonly after?: readonly string[];
}

/**
 * The manifest with every `{ ref: NAME }` of its policy replaced by the resource's live ID, or
 * by the placeholder of its create in this plan (then named in `after`); `missing` lists the
 * references that name nothing. The manifest itself when its policy refers to nothing (the
 * daemon's planner memo keys on it).
 */
export function withReferences(
  m: CloudEndpointManifest,
  resolve: ResolveReference,
): { manifest: CloudEndpointManifest; after: string[]; missing: Reference[] } {
  const refs = CLOUD_ENDPOINT.references?.(m as unknown as Declared) ?? [];
  if (refs.length === 0) return { manifest: m, after: [], missing: [] };
  if (refs.every((r) => r.orderOnly === true)) {
    const order = refs.map((r) => resolve(r));
    const after = [...new Set(order.flatMap((f) => (f?.created === undefined ? [] : [f.created])))];
    const missing = refs.filter((_, i) => order[i] === undefined);
    return { manifest: m, after: after.sort(), missing };
  }
  const policy = structuredClone(m.traffic_policy) as Record<string, unknown>;
  const after = new Set<string>();
  const missing: Reference[] = [];
  for (const ref of refs) {
    const found = resolve(ref);
    if (found === undefined) {
      missing.push(ref);
      continue;
    }
    if (found.created !== undefined) after.add(found.created);
    // Named in the policy's text itself (a secret): nothing to fill in.
    if (ref.orderOnly === true) continue;
    const inPolicy = ref.path.slice(1);
    const parent = inPolicy
      .slice(0, -1)
      .reduce<unknown>((at, key) => (at as Record<string | number, unknown>)[key], policy);
    (parent as Record<string | number, unknown>)[inPolicy[inPolicy.length - 1] as string | number] =
      found.value;
  }
  return { manifest: { ...m, traffic_policy: policy }, after: [...after].sort(), missing };
}

export function planEndpoint(ctx: PlanContext, input: EndpointPlanInput): void {
  const { match, requires } = input;
  const phase: Phase = input.cutover === undefined ? 'main' : 'cutover';
  const m = match.desired;
  const want = desiredFields(ctx, m);
  const sensitivity = new Sensitivity(m.sensitive);
  const base = baseOf(match.address, m);
  const live = match.live;
  if (live === undefined) {
    ctx.changes.push({
      ...base,
      action: 'create',
      reason: 'not found live',
      fields: createFieldsOf(want, desiredPolicy(m), sensitivity),
      operations: [createOp(m, want, match.address, requires, phase, input.after)],
    });
    return;
  }
  const record = live.record;
  const have = liveFields(record);
  if (have.url !== want.url && !patchesUrl(have.url, want.url, input)) {
    if (m.protect || live.meta?.protect === true) {
      // Not a refusal of the whole apply: the rest goes on, and the plan stays unconverged.
      ctx.blocked.push({
        address: match.address,
        kind: 'conflict',
        reason: `${record.id}: url ${have.url} -> ${want.url} replaces the endpoint (delete, then create), and it is protected (protect: true); set protect: false first`,
      });
      return;
    }
    preview(ctx, match.address, m, livePolicy(record));
    // The new record's every value, the URL shown as the change that forces the replacement.
    const fields = createFieldsOf(want, desiredPolicy(m), sensitivity).map((f) =>
      f.path === 'url' ? { ...f, before: have.url } : f,
    );
    ctx.changes.push({
      ...base,
      action: 'replace',
      reason:
        schemeOf(have.url) === schemeOf(want.url)
          ? `url changed (${have.url} -> ${want.url}) while its old URL passes to another endpoint and its new one is released in this plan: replaced (delete, then create)`
          : `url scheme changed (${have.url} -> ${want.url}): a scheme cannot change in place, the endpoint is replaced`,
      id: record.id,
      fields,
      operations: [
        deleteEndpoint(
          record.id,
          // Its old URL taken by another endpoint: the DELETE goes first of all.
          input.releasesUrl === true ? 'release' : phase,
          `delete cloud endpoint ${m.name} (${have.url}) to replace it`,
        ),
        createOp(m, want, match.address, requires, phase, input.after),
      ],
    });
    return;
  }
  planUpdate(ctx, input, base, want, have, sensitivity);
}

/** The graph's edges of an operation sending a policy that names resources this plan creates. */
function graphOf(after: readonly string[] | undefined): {
  after?: readonly string[];
  fills?: readonly FieldPath[];
} {
  return after === undefined || after.length === 0 ? {} : { after, fills: [POLICY] };
}

function schemeOf(url: string): string {
  return url.slice(0, url.indexOf(':'));
}

/**
 * Whether a URL change goes out as part of the endpoint's PATCH: the scheme stays (the service
 * refuses a scheme change in place, 18005), and the phases can order it. A PATCH that leaves a
 * URL another endpoint of the plan takes runs in phase `release`, before that one's write; it
 * cannot also wait for its own new URL to be released in that phase, nor for an edge's cut-over,
 * so those moves stay a delete and a create.
 */
function patchesUrl(from: string, to: string, input: EndpointPlanInput): boolean {
  if (schemeOf(from) !== schemeOf(to) || input.cutover !== undefined) return false;
  return !(input.releasesUrl === true && input.requires.length > 0);
}

function createOp(
  m: CloudEndpointManifest,
  want: EndpointFields,
  address: string,
  requires: readonly string[],
  phase: Phase,
  after: readonly string[] = [],
): Operation {
  const body: EndpointCreate = {
    url: want.url,
    traffic_policy: JSON.stringify(m.traffic_policy),
    ...(m.description === undefined ? {} : { description: m.description }),
    metadata: want.metadata,
    bindings: [...m.bindings] as EndpointCreate['bindings'],
    pooling_enabled: m.pooling_enabled,
  };
  return createEndpoint(
    body,
    `create cloud endpoint ${m.name}`,
    { binds: address, sensitive: bodySensitivity(m), requires, ...graphOf(after) },
    phase,
  );
}

function createFieldsOf(
  want: EndpointFields,
  policy: unknown,
  sensitivity: Sensitivity,
): FieldChange[] {
  const fields: FieldChange[] = [];
  for (const key of ['url', ...SCALARS] as const) {
    const value = want[key];
    if (value === '') continue;
    fields.push({
      path: key,
      after: Array.isArray(value) ? [...value] : value,
      sensitive: sensitivity.isSensitive([key]),
    });
  }
  policyChanges(['traffic_policy'], undefined, policy, sensitivity, fields);
  return fields;
}

function planUpdate(
  ctx: PlanContext,
  { match, requires, releasesUrl, after: createdFirst }: EndpointPlanInput,
  base: ReturnType<typeof baseOf>,
  want: EndpointFields,
  have: EndpointFields,
  sensitivity: Sensitivity,
): void {
  const m = match.desired;
  const record = (match.live as LiveEndpoint).record;
  const patch: EndpointUpdate = {};
  const fields: FieldChange[] = [];
  const changed: string[] = [];
  // Only when `patchesUrl` allowed it (planEndpoint replaces the endpoint otherwise).
  if (have.url !== want.url) {
    changed.push('url');
    fields.push({ path: 'url', before: have.url, after: want.url, sensitive: false });
    patch.url = want.url;
  }
  for (const key of SCALARS) {
    if (equal(have[key], want[key])) continue;
    changed.push(key);
    fields.push({
      path: key,
      before: Array.isArray(have[key]) ? [...(have[key] as string[])] : have[key],
      after: Array.isArray(want[key]) ? [...(want[key] as string[])] : want[key],
      sensitive: sensitivity.isSensitive([key]),
    });
  }
  if (changed.includes('description')) patch.description = want.description;
  if (changed.includes('metadata')) patch.metadata = want.metadata;
  if (changed.includes('bindings')) patch.bindings = [...m.bindings] as EndpointUpdate['bindings'];
  if (changed.includes('pooling_enabled')) patch.pooling_enabled = want.pooling_enabled;
  const before = livePolicy(record);
  const after = desiredPolicy(m);
  if (!equal(before, after)) {
    changed.push('traffic_policy');
    patch.traffic_policy = JSON.stringify(m.traffic_policy);
    preview(ctx, match.address, m, before);
    policyChanges(['traffic_policy'], before, after, sensitivity, fields);
  }
  const operations =
    changed.length === 0
      ? []
      : [
          updateEndpoint(
            record.id,
            patch,
            `update cloud endpoint ${m.name}`,
            {
              sensitive: bodySensitivity(m),
              requires,
              ...graphOf(patch.traffic_policy === undefined ? [] : (createdFirst ?? [])),
            },
            // Leaving a URL another endpoint of the plan takes: before that one's write.
            patch.url !== undefined && releasesUrl === true ? 'release' : 'main',
          ),
        ];
  ctx.changes.push({
    ...base,
    action: changed.length === 0 ? 'noop' : 'update',
    reason: changed.length === 0 ? 'up to date' : `changed ${changed.join(', ')}`,
    id: record.id,
    fields,
    operations,
  });
}

/** What the policy change does to requests, for the plan's impact preview. */
function preview(
  ctx: PlanContext,
  address: string,
  m: CloudEndpointManifest,
  before: unknown,
): void {
  if (!ctx.policyPreview) return;
  const entry = impactEntry(address, m.url, before, desiredPolicy(m), m.tests ?? []);
  if (entry !== undefined) ctx.impacts.push(entry);
}

function baseOf(address: string, m: CloudEndpointManifest) {
  return {
    address,
    kind: 'cloud_endpoint' as const,
    name: m.name,
    root: address,
    source: m.source,
    modules: [],
  };
}

/**
 * An owned endpoint no manifest keeps (or a duplicate): one DELETE, in the delete phase, or in
 * `release` when another endpoint of the plan takes its URL (`releasesUrl`).
 */
export function planEndpointDelete(ctx: PlanContext, o: EndpointOrphan, releasesUrl = false): void {
  const r = o.live.record;
  const fields: FieldChange[] = [{ path: 'url', before: r.url, sensitive: false }];
  if ((r.description ?? '') !== '') {
    fields.push({ path: 'description', before: r.description, sensitive: false });
  }
  ctx.changes.push({
    address: o.address,
    kind: 'cloud_endpoint',
    name: o.live.meta?.name ?? r.id,
    root: o.address,
    action: 'delete',
    reason: o.reason,
    id: r.id,
    fields,
    modules: [],
    operations: [
      deleteEndpoint(r.id, releasesUrl ? 'release' : 'delete', `delete cloud endpoint ${r.id}`),
    ],
  });
}
