/**
 * The generic planner: every registered kind without a planner of its own (src/kinds/) is
 * planned here from its definition's fields, with no line of code about the kind itself.
 *
 * - Matching: by the owner mark in `metadata` (`edgesync/owner` and `edgesync/name`, written on
 *   every create and update), or by the natural key the definition names (a domain's host name);
 *   `id:` adopts a live record whatever its mark.
 * - A declared resource not found live is created (one POST with every field; it binds its
 *   address so later operations can name it); one found is compared field by field: a difference
 *   in a field that cannot change in place replaces it (DELETE, then POST, `-/+`), any other is
 *   one PATCH with the changed fields. `ensure: absent` deletes it; `suspend: true` leaves it.
 * - References to other resources are resolved to their live ID, or to the `{created:ADDRESS}`
 *   placeholder of a create earlier in the same plan, which the executor fills from that POST's
 *   answer (`Operation.fills`); the referring operation runs `after` the created root, an edge
 *   of the plan's dependency graph (./graph.ts).
 * - Orphans (ours live, no manifest) of a kind that `prune`s are deleted, after the deletion
 *   guards; a kind that does not prune (domains) keeps them.
 */
import equal from 'fast-deep-equal';
import type {
  Declared,
  FieldRule,
  KindDefinition,
  LiveRecord,
  Reference,
  ResolveReference,
} from '../kinds/index.js';
import { addressOf, GENERIC_KINDS } from '../kinds/index.js';
import { DIGEST_KEY, recordMetadata, storedMetadata } from '../manifest/metadata.js';
import type { FieldPath } from '../manifest/paths.js';
import type { DesiredSet } from '../manifest/schema.js';
import type { PlanContext } from './context.js';
import { guardDeletions } from './guards.js';
import type { FieldChange, Operation, ResourceChange } from './model.js';
import { type PlannedTarget, routeTarget, targetPath } from './target.js';

/** What the generic planner reads of the live account. */
export interface GenericLive {
  readonly resources?: Readonly<Record<string, readonly LiveRecord[]>> | undefined;
}

/** The text standing for the ID a create earlier in the plan returns (filled by the executor). */
export function createdPlaceholder(address: string): string {
  return `{created:${address}}`;
}

/** A declared resource with the live record it matched (absent: to create). */
interface Match {
  readonly kind: KindDefinition;
  readonly declared: Declared;
  readonly live: LiveRecord | undefined;
  readonly address: string;
}

/** Resolves references by name: to live IDs, or to creates of this plan. */
class References {
  /** `kind.name` -> live ID, or the placeholder of its create in this plan. */
  readonly #ids = new Map<string, string>();
  /** `kind.name` -> the address whose create provides the ID (when created in this plan). */
  readonly #created = new Set<string>();

  add(kind: string, name: string, id: string | undefined): void {
    const key = addressOf(kind, name);
    if (id !== undefined) this.#ids.set(key, id);
    else {
      this.#ids.set(key, createdPlaceholder(key));
      this.#created.add(key);
    }
  }

  has(kind: string, name: string): boolean {
    return this.#ids.has(addressOf(kind, name));
  }

  resolve(ref: Reference): { readonly value: string; readonly created?: string } | undefined {
    const key = addressOf(ref.kind, ref.name);
    const value = this.#ids.get(key);
    if (value === undefined) return undefined;
    return this.#created.has(key) ? { value, created: key } : { value };
  }
}

/** The declared resources of a kind in the loaded set. */
function declaredOf(desired: DesiredSet, kind: KindDefinition): readonly Declared[] {
  return (desired.resources?.[kind.kind] ?? []) as readonly Declared[];
}

/** The live records of a kind in the snapshot. */
function liveOf(live: GenericLive, kind: KindDefinition): readonly LiveRecord[] {
  return live.resources?.[kind.kind] ?? [];
}

/**
 * Plans every generic kind; returns the resolver of references to them, for the kinds planned
 * after (a cloud endpoint naming an IP policy).
 */
export function planGenericKinds(
  ctx: PlanContext,
  desired: DesiredSet,
  live: GenericLive,
  kinds: readonly KindDefinition[] = GENERIC_KINDS,
): ResolveReference {
  const refs = new References();
  const matches: Match[] = [];
  const orphans: { kind: KindDefinition; live: LiveRecord; address: string; protect: boolean }[] =
    [];
  for (const kind of kinds) {
    const found = matchKind(ctx, kind, declaredOf(desired, kind), liveOf(live, kind));
    for (const m of found.matches) {
      matches.push(m);
      refs.add(kind.kind, m.declared.name, m.live?.id);
    }
    for (const [name, record] of found.unclaimed) refs.add(kind.kind, name, record.id);
    orphans.push(...found.orphans);
  }
  for (const m of matches) {
    if (ctx.targets !== undefined && !ctx.targets.has(m.address)) continue;
    planMatch(ctx, m, refs);
  }
  const allowed = guardDeletions(
    ctx,
    orphans.filter((o) => ctx.targets === undefined || ctx.targets.has(o.address)),
    (o) => ({ address: o.address, id: o.live.id, protect: o.protect, noun: o.kind.kind }),
    false,
  );
  for (const o of allowed) {
    pushChange(ctx, o.kind, {
      address: o.address,
      name: o.address.slice(o.kind.kind.length + 1),
      action: 'delete',
      reason: 'manifest removed',
      id: o.live.id,
      fields: [],
      operations: [deleteOp(o.kind, o.live.id, `delete ${o.address}`)],
    });
  }
  return (ref) => refs.resolve(ref);
}

/** Declared resources matched to live records; live ones named by no manifest. */
function matchKind(
  ctx: PlanContext,
  kind: KindDefinition,
  declared: readonly Declared[],
  live: readonly LiveRecord[],
): {
  matches: Match[];
  /** Live records of this kind no manifest claims, by the name a reference would use. */
  unclaimed: Map<string, LiveRecord>;
  orphans: { kind: KindDefinition; live: LiveRecord; address: string; protect: boolean }[];
} {
  const byId = new Map(live.map((l) => [l.id, l]));
  const byName = new Map<string, LiveRecord>();
  const ownership = kind.ownership;
  for (const l of live) {
    const name = ownership.by === 'key' ? ownership.key(l) : ownedName(l, ctx.owner);
    if (name !== undefined && !byName.has(name)) byName.set(name, l);
  }
  const claimed = new Set<LiveRecord>();
  const matches: Match[] = [];
  for (const d of declared) {
    const key = ownership.by === 'key' ? ownership.declared(d) : d.name;
    const record = (d.id !== undefined ? byId.get(d.id) : undefined) ?? byName.get(key);
    if (record !== undefined) claimed.add(record);
    matches.push({ kind, declared: d, live: record, address: addressOf(kind.kind, d.name) });
  }
  const unclaimed = new Map<string, LiveRecord>();
  const orphans: { kind: KindDefinition; live: LiveRecord; address: string; protect: boolean }[] =
    [];
  for (const [name, record] of byName) {
    if (claimed.has(record)) continue;
    unclaimed.set(name, record);
    if (kind.prune && ownership.by === 'metadata') {
      orphans.push({
        kind,
        live: record,
        address: addressOf(kind.kind, name),
        protect: recordMetadata(record as { metadata?: string })?.protect === true,
      });
    }
  }
  return { matches, unclaimed, orphans };
}

/** The manifest name in a record's owner mark, when the mark is this owner's. */
function ownedName(record: LiveRecord, owner: string): string | undefined {
  const meta = recordMetadata(record as { metadata?: string | null });
  return meta?.owner === owner ? meta.name : undefined;
}

interface Resolved {
  /** Field name -> desired value, references filled. */
  readonly values: Map<string, unknown>;
  /** Paths of fields holding a created placeholder, and the roots they wait for. */
  readonly fills: string[][];
  readonly requires: Set<string>;
  /** References that name nothing declared or live. */
  readonly missing: Reference[];
}

function resolveFields(m: Match, refs: References): Resolved {
  const values = new Map<string, unknown>();
  const fills: string[][] = [];
  const requires = new Set<string>();
  const missing: Reference[] = [];
  for (const rule of m.kind.fields ?? []) {
    let created = false;
    const value = (rule as FieldRule).desired(m.declared, (ref) => {
      const found = refs.resolve(ref);
      if (found === undefined) {
        missing.push(ref);
        return '';
      }
      if (found.created !== undefined) {
        requires.add(found.created);
        created = true;
      }
      return found.value;
    });
    if (value === undefined) continue;
    values.set(rule.name, value);
    if (created) fills.push([rule.name]);
  }
  return { values, fills, requires, missing };
}

/**
 * The `metadata` the generic planner writes: the user's labels, the owner mark, and the keyed
 * digest of the write-only fields' values when the kind has any (`edgesync/digest`).
 */
function desiredMetadata(ctx: PlanContext, d: Declared): string {
  const own = (d.metadata ?? {}) as Readonly<Record<string, string>>;
  const labels = d.digest === undefined ? own : { ...own, [DIGEST_KEY]: d.digest };
  return storedMetadata(labels, { owner: ctx.owner, name: d.name, protect: d.protect === true });
}

/** The write-only fields of a kind (a secret's value). */
function writeOnlyRules(kind: KindDefinition): readonly FieldRule[] {
  return (kind.fields ?? []).filter((r) => r.writeOnly === true) as readonly FieldRule[];
}

/** The digest of the write-only values a live record's metadata keeps (undefined: none). */
function liveDigest(live: LiveRecord): string | undefined {
  return recordMetadata(live as { metadata?: string })?.digest;
}

function planMatch(ctx: PlanContext, m: Match, refs: References): void {
  const d = m.declared;
  if (d.suspend === true) {
    ctx.blocked.push({
      address: m.address,
      kind: 'suspended',
      reason:
        m.live === undefined
          ? 'suspend: true: not created while suspended'
          : `${m.live.id}: suspend: true: left exactly as it is live`,
    });
    return;
  }
  if (d.ensure === 'absent') {
    if (m.live === undefined) return;
    pushChange(ctx, m.kind, {
      address: m.address,
      name: d.name,
      action: 'delete',
      reason: 'ensure: absent',
      id: m.live.id,
      source: d.source,
      fields: [],
      operations: [deleteOp(m.kind, m.live.id, `delete ${m.address}`)],
    });
    return;
  }
  const resolved = resolveFields(m, refs);
  if (resolved.missing.length > 0) {
    const names = resolved.missing.map((r) => addressOf(r.kind, r.name)).join(', ');
    ctx.blocked.push({
      address: m.address,
      kind: 'guard',
      reason: `refers to ${names}, which is neither declared nor live`,
    });
    return;
  }
  if (writeOnlyRules(m.kind).length > 0 && d.digest === undefined) {
    // The loader refuses such a set with a located error; a caller that skipped it gets no write.
    ctx.blocked.push({
      address: m.address,
      kind: 'guard',
      reason: 'its write-only values have no digest (no secret digest key was given)',
    });
    return;
  }
  resolved.values.set('metadata', desiredMetadata(ctx, d));
  const sensitive = sensitiveFields(m.kind, d);
  if (m.live === undefined) {
    pushChange(ctx, m.kind, {
      address: m.address,
      name: d.name,
      action: 'create',
      reason: 'not found live',
      source: d.source,
      fields: [...resolved.values].map(([path, after]) => ({
        path,
        after,
        sensitive: sensitive.has(path),
      })),
      operations: [createOp(m, resolved, sensitive)],
    });
    return;
  }
  planExisting(ctx, m, m.live, resolved, sensitive);
}

function planExisting(
  ctx: PlanContext,
  m: Match,
  live: LiveRecord,
  resolved: Resolved,
  sensitive: ReadonlySet<string>,
): void {
  const d = m.declared;
  const changed: FieldChange[] = [];
  let replace = false;
  for (const rule of m.kind.fields ?? []) {
    if (!resolved.values.has(rule.name) || rule.writeOnly === true) continue;
    const after = resolved.values.get(rule.name);
    const before = (rule as FieldRule).live(live);
    if (equal(before, after)) continue;
    changed.push({ path: rule.name, before, after, sensitive: sensitive.has(rule.name) });
    if (rule.replace === true) replace = true;
  }
  // A write-only value is never read back: the digest kept beside it says whether Git changed
  // it. Sent (with the metadata holding the new digest) only when the digests differ.
  const writeOnly = writeOnlyRules(m.kind);
  const rewrite = writeOnly.length > 0 && liveDigest(live) !== d.digest;
  if (rewrite) {
    for (const rule of writeOnly) {
      if (!resolved.values.has(rule.name)) continue;
      changed.push({ path: rule.name, after: resolved.values.get(rule.name), sensitive: true });
    }
  }
  const metadata = resolved.values.get('metadata');
  if (!equal(normalisedMetadata(live), metadata)) {
    changed.push({ path: 'metadata', before: live.metadata, after: metadata, sensitive: false });
  }
  const adopt = d.id !== undefined && ownedName(live, ctx.owner) !== d.name;
  const common = { address: m.address, name: d.name, id: live.id, source: d.source };
  if (changed.length === 0) {
    pushChange(ctx, m.kind, {
      ...common,
      action: 'noop',
      reason: 'up to date',
      fields: [],
      operations: [],
    });
    return;
  }
  if (replace) {
    const fields = changed.filter((c) =>
      (m.kind.fields ?? []).some((r) => r.name === c.path && r.replace),
    );
    pushChange(ctx, m.kind, {
      ...common,
      action: 'replace',
      reason: `${fields.map((f) => f.path).join(', ')} cannot change in place`,
      fields: changed,
      operations: [
        deleteOp(m.kind, live.id, `delete ${m.address} to replace it`, 'main'),
        createOp(m, resolved, sensitive),
      ],
    });
    return;
  }
  const body: Record<string, unknown> = {};
  const updatable = new Set(
    (m.kind.fields ?? []).filter((r) => r.createOnly !== true).map((r) => r.name),
  );
  updatable.add('metadata');
  for (const c of changed) if (updatable.has(c.path)) body[c.path] = c.after;
  pushChange(ctx, m.kind, {
    ...common,
    action: adopt ? 'adopt' : 'update',
    reason: adopt ? `adopt ${live.id}` : `changed ${changed.map((c) => c.path).join(', ')}`,
    fields: changed,
    operations: [
      withGraph(
        {
          method: 'PATCH',
          ...targeted(itemTarget(m.kind, 'update', live.id)),
          phase: 'main',
          description: `update ${m.address}`,
          body,
          sensitive_paths: [...sensitive].filter((p) => p in body).map((p) => [p]),
        },
        resolved,
        Object.keys(body),
      ),
    ],
  });
}

/** A live record's metadata as written (absent reads as empty). */
function normalisedMetadata(live: LiveRecord): unknown {
  return typeof live.metadata === 'string' ? live.metadata : '';
}

function sensitiveFields(kind: KindDefinition, d: Declared): Set<string> {
  const out = new Set<string>();
  for (const rule of kind.fields ?? []) if (rule.sensitive === true) out.add(rule.name);
  for (const path of d.sensitive) if (typeof path[0] === 'string') out.add(path[0]);
  return out;
}

/** Adds the graph's edges (created roots required) and the placeholders to fill, to an operation. */
function withGraph(op: Operation, resolved: Resolved, inBody: readonly string[]): Operation {
  const fills = resolved.fills.filter((f) => inBody.includes(f[0] as string));
  if (fills.length > 0) op.fills = fills as FieldPath[];
  const after = [...resolved.requires];
  if (after.length > 0 && fills.length > 0) op.after = after.sort();
  return op;
}

function createOp(m: Match, resolved: Resolved, sensitive: ReadonlySet<string>): Operation {
  const body = Object.fromEntries(resolved.values);
  return withGraph(
    {
      method: 'POST',
      ...targeted(collectionTarget(m.kind)),
      phase: 'main',
      description: `create ${m.address}`,
      body,
      binds: m.address,
      sensitive_paths: [...sensitive].filter((p) => p in body).map((p) => [p]),
    },
    resolved,
    Object.keys(body),
  );
}

function deleteOp(
  kind: KindDefinition,
  id: string,
  description: string,
  phase: Operation['phase'] = 'delete',
): Operation {
  return {
    method: 'DELETE',
    ...targeted(itemTarget(kind, 'delete', id)),
    phase,
    description,
    sensitive_paths: [],
  };
}

function targeted(target: PlannedTarget): { target: PlannedTarget; path: string } {
  return { target, path: targetPath(target) };
}

function collectionTarget(kind: KindDefinition): PlannedTarget {
  return routeTarget(kind.api.create ?? kind.api.list);
}

function itemTarget(kind: KindDefinition, op: 'update' | 'delete', id: string): PlannedTarget {
  return routeTarget(kind.api[op] ?? kind.api.list, id);
}

function pushChange(
  ctx: PlanContext,
  kind: KindDefinition,
  change: Omit<ResourceChange, 'kind' | 'root' | 'modules' | 'operations' | 'fields'> & {
    readonly operations: Operation[];
    readonly fields: FieldChange[];
  },
): void {
  ctx.changes.push({
    ...change,
    kind: kind.kind,
    root: change.address,
    modules: [],
  } as ResourceChange);
}
