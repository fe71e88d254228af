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
 * - A write-only value (a secret's) is compared through the keyed digest kept in `metadata`,
 *   bound to the actor it was written as (`edgesync/by`): a digest that does not match Git's
 *   value rewrites it, and so does a live writer (`last_updated_by`) other than that actor (a
 *   write made outside Git). Every write of such a kind records the actor edgesync writes as,
 *   as the account shows it (`knownWriter`); when it shows none yet, the executor stamps the
 *   actor its answer names (`writerStamps`).
 * - A kind's child collection (an IP policy's rules, `KindDefinition.children`, listed
 *   account-wide) is planned under each declared parent as one change of the parent's root
 *   (`<parent>.<plural>`), its operations one per child in the definition's `rank` order: a
 *   new parent's children are created after its POST, naming it by the created placeholder.
 */
import equal from 'fast-deep-equal';
import type {
  ChildCollection,
  Declared,
  DeclaredChild,
  FieldRule,
  KindDefinition,
  LiveRecord,
  Readiness,
  Reference,
} from '../kinds/index.js';
import { addressOf, GENERIC_KINDS, KINDS } from '../kinds/index.js';
import { DIGEST_KEY, recordMetadata, storedMetadata, WRITER_KEY } from '../manifest/metadata.js';
import type { FieldPath } from '../manifest/paths.js';
import type { DesiredSet } from '../manifest/schema.js';
import type { PlanContext, ResolvedReference, ResolveReference } from './context.js';
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

/** Resolves references by name (or natural key): to live IDs, or to creates of this plan. */
class References {
  /** `kind.name` -> live ID, or the placeholder of its create in this plan. */
  readonly #ids = new Map<string, string>();
  /** `kind.name` -> the address whose create provides the ID (when created in this plan). */
  readonly #created = new Set<string>();
  /** `kind.name` -> the live record's readiness. */
  readonly #readiness = new Map<string, Readiness>();
  /** `kind` NUL natural key -> `kind.name`, for the kinds owned by a key. */
  readonly #keys = new Map<string, string>();
  /** Kinds with at least one resource declared or live. */
  readonly #used = new Set<string>();

  add(
    kind: KindDefinition,
    name: string,
    live: LiveRecord | undefined,
    naturalKey?: string | undefined,
  ): void {
    const key = addressOf(kind.kind, name);
    this.#used.add(kind.kind);
    if (naturalKey !== undefined && !this.#keys.has(`${kind.kind}\0${naturalKey}`)) {
      this.#keys.set(`${kind.kind}\0${naturalKey}`, key);
    }
    if (live !== undefined) {
      this.#ids.set(key, live.id);
      if (kind.readiness !== undefined) this.#readiness.set(key, kind.readiness(live));
    } else {
      this.#ids.set(key, createdPlaceholder(key));
      this.#created.add(key);
    }
  }

  resolve(ref: Reference): ResolvedReference | 'unchecked' | undefined {
    const key =
      ref.keys === undefined
        ? addressOf(ref.kind, ref.name)
        : ref.keys.map((k) => this.#keys.get(`${ref.kind}\0${k}`)).find((a) => a !== undefined);
    const value = key === undefined ? undefined : this.#ids.get(key);
    if (key === undefined || value === undefined) {
      return ref.onlyWhereUsed === true && !this.#used.has(ref.kind) ? 'unchecked' : undefined;
    }
    const readiness = this.#readiness.get(key);
    return {
      value,
      address: key,
      ...(this.#created.has(key) ? { created: key } : {}),
      ...(readiness === undefined ? {} : { readiness }),
    };
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
      refs.add(kind, m.declared.name, m.live, naturalKey(kind, m.declared));
      if (m.live !== undefined && m.declared.ensure !== 'absent') noteReadiness(ctx, m, m.live);
    }
    for (const [name, record] of found.unclaimed) {
      refs.add(kind, name, record, kind.ownership.by === 'key' ? name : undefined);
    }
    orphans.push(...found.orphans);
    keptWarnings(ctx, kind, found.unclaimed);
  }
  const children = childrenByParent(live, kinds);
  const writer = knownWriter(matches);
  for (const m of matches) {
    if (ctx.targets !== undefined && !ctx.targets.has(m.address)) continue;
    planMatch(ctx, m, refs, children, writer);
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

/** The natural key a declared resource of a key-owned kind is known by (a domain's host name). */
function naturalKey(kind: KindDefinition, d: Declared): string | undefined {
  return kind.ownership.by === 'key' ? kind.ownership.declared(d) : undefined;
}

/** A declared resource's live readiness, in the plan when it is not ready. */
function noteReadiness(ctx: PlanContext, m: Match, live: LiveRecord): void {
  const readiness = m.kind.readiness?.(live);
  if (readiness === undefined || readiness.state === 'ready') return;
  const { records, ...rest } = readiness;
  ctx.readiness.push({
    address: m.address,
    id: live.id,
    ...rest,
    ...(records === undefined ? {} : { records: [...records] }),
  });
}

/**
 * A kind that is never pruned keeps the records it marked as its own after their manifests went
 * away: said in the plan, so nobody believes them deleted (only `ensure: absent` deletes one).
 */
function keptWarnings(
  ctx: PlanContext,
  kind: KindDefinition,
  unclaimed: ReadonlyMap<string, LiveRecord>,
): void {
  if (kind.prune) return;
  for (const [key, record] of unclaimed) {
    const name = ownedName(record, ctx.owner);
    if (name === undefined) continue;
    const address = addressOf(kind.kind, name);
    if (ctx.targets !== undefined && !ctx.targets.has(address)) continue;
    const shown = kind.ownership.by === 'key' ? `${key}, ${record.id}` : record.id;
    ctx.warnings.push(
      `${address} (${shown}) is kept: no manifest declares it any more, and ${kind.plural} are never deleted implicitly; declare it with ensure: absent to delete it`,
    );
  }
}

/** Live children by their parent's ID, for the kinds with a child collection. */
function childrenByParent(
  live: GenericLive,
  kinds: readonly KindDefinition[],
): Map<string, LiveRecord[]> {
  const out = new Map<string, LiveRecord[]>();
  for (const kind of kinds) {
    const collection = kind.children;
    if (collection === undefined) continue;
    for (const child of live.resources?.[collection.kind] ?? []) {
      const parent = collection.parentOf(child);
      if (parent === undefined) continue;
      const list = out.get(parent);
      if (list === undefined) out.set(parent, [child]);
      else list.push(child);
    }
  }
  return out;
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
      if (found === undefined || found === 'unchecked') {
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
 * The `metadata` the generic planner writes: the user's labels, the owner mark and, when the
 * kind has write-only fields, the keyed digest of their values (`edgesync/digest`) bound to the
 * actor they are written as (`edgesync/by`; left out while that actor is not known).
 */
function desiredMetadata(owner: string, d: Declared, writer: string | undefined): string {
  const own = (d.metadata ?? {}) as Readonly<Record<string, string>>;
  const labels =
    d.digestFor === undefined
      ? own
      : {
          ...own,
          [DIGEST_KEY]: d.digestFor(writer),
          ...(writer === undefined ? {} : { [WRITER_KEY]: writer }),
        };
  return storedMetadata(labels, { owner, name: d.name, protect: d.protect === true });
}

/**
 * The actor edgesync writes as, as the account shows it: the writer recorded on a declared
 * resource of ours that nobody wrote since (its live `last_updated_by` is that writer) and whose
 * digest, bound to it, matches Git's values (only the key's holder makes such a pair). The most
 * recently written such record, if several writers show (a credential moved to another actor).
 * Undefined on an account with none yet: the first write learns it from its answer. Durable on
 * the service, so a restarted or failed-over controller knows it from its first plan.
 */
function knownWriter(matches: readonly Match[]): string | undefined {
  let best: { writer: string; at: string } | undefined;
  for (const m of matches) {
    const { live, declared: d } = m;
    if (live === undefined || d.digestFor === undefined || m.kind.writer === undefined) continue;
    const recorded = recordMetadata(live as { metadata?: string | null });
    const writer = recorded?.writer;
    if (writer === undefined || m.kind.writer(live) !== writer) continue;
    if (recorded?.digest !== d.digestFor(writer)) continue;
    const at = typeof live.updated_at === 'string' ? live.updated_at : '';
    if (best === undefined || at > best.at) best = { writer, at };
  }
  return best?.writer;
}

/**
 * The `metadata` of a resource written as `writer`, by its address, for the resources of the
 * kinds with write-only values in `desired`: the executor stamps a write whose answer names
 * another actor than the plan knew (the first write on an account) with it. Undefined for any
 * other address.
 */
export function writerStamps(
  desired: DesiredSet,
  owner: string,
): (address: string, writer: string) => string | undefined {
  const byAddress = new Map<string, Declared>();
  for (const kind of GENERIC_KINDS) {
    if (writeOnlyRules(kind).length === 0) continue;
    for (const d of declaredOf(desired, kind)) byAddress.set(addressOf(kind.kind, d.name), d);
  }
  return (address, writer) => {
    const d = byAddress.get(address);
    return d?.digestFor === undefined ? undefined : desiredMetadata(owner, d, writer);
  };
}

/** The write-only fields of a kind (a secret's value). */
function writeOnlyRules(kind: KindDefinition): readonly FieldRule[] {
  return (kind.fields ?? []).filter((r) => r.writeOnly === true) as readonly FieldRule[];
}

/**
 * Why a live record's write-only values are to be written again, or undefined when they are
 * Git's and nobody wrote them since: its digest (bound to the writer kept beside it) does not
 * match Git's values (a change in Git, or a digest nobody holding the key made); or its live
 * writer is another actor than the one kept (a write made outside Git: `drift` says so), or
 * none is kept (written before writers were recorded: nothing tells who wrote it last).
 */
function writtenOutsideGit(
  m: Match,
  live: LiveRecord,
): { readonly drift?: string | undefined } | undefined {
  const recorded = recordMetadata(live as { metadata?: string | null });
  const digestFor = m.declared.digestFor;
  if (digestFor === undefined) return undefined;
  if (recorded?.digest !== digestFor(recorded?.writer)) return {};
  const last = m.kind.writer?.(live);
  // A service that does not say who wrote: the digest alone decides.
  if (last === undefined || last === recorded.writer) return undefined;
  return {
    drift:
      recorded.writer === undefined
        ? `value rewritten: no writer is kept beside its digest, last written by ${last}`
        : `changed outside Git: last written by ${last}, not ${recorded.writer}`,
  };
}

function planMatch(
  ctx: PlanContext,
  m: Match,
  refs: References,
  children: ReadonlyMap<string, readonly LiveRecord[]>,
  writer: string | undefined,
): void {
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
  if (writeOnlyRules(m.kind).length > 0 && d.digestFor === undefined) {
    // The loader refuses such a set with a located error; a caller that skipped it gets no write.
    ctx.blocked.push({
      address: m.address,
      kind: 'guard',
      reason: 'its write-only values have no digest (no secret digest key was given)',
    });
    return;
  }
  resolved.values.set('metadata', desiredMetadata(ctx.owner, d, writer));
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
    planChildren(ctx, m, undefined, []);
    return;
  }
  const replaced = planExisting(ctx, m, m.live, resolved, sensitive, refs, writer);
  if (replaced) planChildren(ctx, m, undefined, []);
  else planChildren(ctx, m, m.live.id, children.get(m.live.id) ?? []);
}

/** One step of a parent's children: its rank, its field change and its operations. */
interface ChildStep {
  readonly rank: number;
  readonly key: string;
  readonly verb: 'create' | 'replace' | 'delete' | 'update';
  readonly field: FieldChange;
  readonly operations: Operation[];
}

/**
 * The children of one declared parent, as one change of its root: each declared child not found
 * live (by key) created, one whose `replace` field differs deleted then created, one whose other
 * fields differ PATCHed, each live child no longer declared deleted; in the definition's rank
 * order (then by key), after the parent's own operations. `parentId` undefined: the parent is
 * created (or re-created) by this plan, and its children name it by the created placeholder.
 */
function planChildren(
  ctx: PlanContext,
  m: Match,
  parentId: string | undefined,
  live: readonly LiveRecord[],
): void {
  const collection = m.kind.children;
  if (collection === undefined) return;
  const byKey = new Map(live.map((l) => [collection.key(l), l]));
  const sensitivePrefixes = m.declared.sensitive;
  const steps: ChildStep[] = [];
  const declaredKeys = new Set<string>();
  for (const child of collection.declared(m.declared)) {
    declaredKeys.add(child.key);
    const sensitive = childSensitive(child, sensitivePrefixes);
    const found = byKey.get(child.key);
    const fieldPath = `${collection.plural}[${JSON.stringify(child.key)}]`;
    if (found === undefined) {
      steps.push({
        rank: collection.rank('create', child.values),
        key: child.key,
        verb: 'create',
        field: { path: fieldPath, after: child.values, sensitive: sensitive.length > 0 },
        operations: [childCreate(m, collection, child, parentId, sensitive)],
      });
      continue;
    }
    const before = Object.fromEntries(collection.fields.map((f) => [f.name, f.live(found)]));
    const changed = collection.fields.filter((f) => !equal(f.live(found), child.values[f.name]));
    if (changed.length === 0) continue;
    const field = {
      path: fieldPath,
      before,
      after: Object.fromEntries(collection.fields.map((f) => [f.name, child.values[f.name]])),
      sensitive: sensitive.length > 0,
    };
    if (changed.some((f) => f.replace === true)) {
      steps.push({
        rank: collection.rank('replace', child.values),
        key: child.key,
        verb: 'replace',
        field,
        operations: [
          childDelete(m, collection, found, { ...found, ...before }, 'main'),
          childCreate(m, collection, child, parentId, sensitive),
        ],
      });
      continue;
    }
    const body = Object.fromEntries(changed.map((f) => [f.name, child.values[f.name]]));
    steps.push({
      rank: collection.rank('update', child.values),
      key: child.key,
      verb: 'update',
      field,
      operations: [
        {
          method: 'PATCH',
          ...targeted(routeTarget(collection.api.update ?? collection.api.list, found.id)),
          phase: 'main',
          description: `update ${collection.describe(child.values)} in ${m.address}`,
          body,
          sensitive_paths: sensitive.filter((p) => p in body).map((p) => [p]),
        },
      ],
    });
  }
  for (const [key, l] of byKey) {
    if (declaredKeys.has(key)) continue;
    const before = Object.fromEntries(collection.fields.map((f) => [f.name, f.live(l)]));
    steps.push({
      rank: collection.rank('delete', { ...l, ...before }),
      key,
      verb: 'delete',
      field: { path: `${collection.plural}[${JSON.stringify(key)}]`, before, sensitive: false },
      operations: [childDelete(m, collection, l, { ...l, ...before }, 'main')],
    });
  }
  if (steps.length === 0) return;
  steps.sort((a, b) => a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.verb, (counts.get(s.verb) ?? 0) + 1);
  const address = `${m.address}.${collection.plural}`;
  ctx.changes.push({
    address,
    kind: collection.kind,
    name: `${m.declared.name}.${collection.plural}`,
    root: m.address,
    action: parentId === undefined ? 'create' : 'update',
    reason: [...counts].map(([verb, n]) => `${n} to ${verb}`).join(', '),
    ...(m.declared.source === undefined ? {} : { source: m.declared.source }),
    fields: steps.map((s) => s.field),
    modules: [],
    operations: steps.flatMap((s) => s.operations),
  } as ResourceChange);
}

/** The fields of a declared child read from `{ env }` / `{ file }` (sensitive). */
function childSensitive(child: DeclaredChild, paths: Declared['sensitive']): string[] {
  const out: string[] = [];
  for (const path of paths) {
    if (path.length <= child.path.length) continue;
    if (!child.path.every((seg, i) => path[i] === seg)) continue;
    const field = path[child.path.length];
    if (typeof field === 'string') out.push(field);
  }
  return out;
}

function childCreate(
  m: Match,
  collection: ChildCollection,
  child: DeclaredChild,
  parentId: string | undefined,
  sensitive: readonly string[],
): Operation {
  const body = {
    ...child.values,
    [collection.parentField]: parentId ?? createdPlaceholder(m.address),
  };
  return {
    method: 'POST',
    ...targeted(routeTarget(collection.api.create ?? collection.api.list)),
    phase: 'main',
    description: `create ${collection.describe(child.values)} in ${m.address}`,
    body,
    sensitive_paths: sensitive.filter((p) => p in body).map((p) => [p]),
    // The parent's POST is an earlier operation of the same root: filled from its answer.
    ...(parentId === undefined ? { fills: [[collection.parentField]] } : {}),
  };
}

function childDelete(
  m: Match,
  collection: ChildCollection,
  l: LiveRecord,
  values: Readonly<Record<string, unknown>>,
  phase: Operation['phase'],
): Operation {
  return {
    method: 'DELETE',
    ...targeted(routeTarget(collection.api.delete ?? collection.api.list, l.id)),
    phase,
    description: `delete ${collection.describe(values)} from ${m.address}`,
    sensitive_paths: [],
  };
}

/** Plans a matched resource; true when it is replaced (its children go with it). */
function planExisting(
  ctx: PlanContext,
  m: Match,
  live: LiveRecord,
  resolved: Resolved,
  sensitive: ReadonlySet<string>,
  refs: References,
  writer: string | undefined,
): boolean {
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
  // it, and the writer kept with it whether someone else wrote it since. Sent (with the
  // metadata holding the new digest) only then.
  const writeOnly = writeOnlyRules(m.kind);
  const outside = writeOnly.length > 0 ? writtenOutsideGit(m, live) : undefined;
  if (outside !== undefined) {
    for (const rule of writeOnly) {
      if (!resolved.values.has(rule.name)) continue;
      changed.push({ path: rule.name, after: resolved.values.get(rule.name), sensitive: true });
    }
  }
  if (writeOnly.length > 0) {
    // Compared with the writer the record keeps (a record another actor of ours wrote is not
    // written again for that alone); once written anyway, it records the actor writing it.
    const kept = recordMetadata(live as { metadata?: string })?.writer;
    const same = desiredMetadata(ctx.owner, d, kept);
    const written = outside !== undefined || changed.length > 0;
    resolved.values.set(
      'metadata',
      written || !equal(normalisedMetadata(live), same)
        ? desiredMetadata(ctx.owner, d, writer ?? kept)
        : same,
    );
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
    return false;
  }
  if (replace) {
    // What refers to it (an endpoint planned after) names the new record: the ID its POST returns.
    refs.add(m.kind, d.name, undefined);
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
    return true;
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
    reason: adopt
      ? `adopt ${live.id}`
      : (outside?.drift ?? `changed ${changed.map((c) => c.path).join(', ')}`),
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
  return false;
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

/**
 * Holds back the deletes of resources a live record of another kind still names by ID (an IP
 * policy a live endpoint's `restrict-ips` names: deleting it would silently empty the
 * endpoint's allowed ranges). A delete goes ahead only when the plan deletes every such
 * record, or rewrites it into a declared state that names the resource no more (then the
 * delete, in the delete phase, runs after it). Otherwise the delete leaves the plan, blocked
 * with the names of the records in the way.
 */
export function holdReferencedDeletes(
  ctx: PlanContext,
  desired: DesiredSet,
  live: GenericLive,
  resolve: ResolveReference,
): void {
  const referrers = KINDS.filter((k) => k.liveReferences !== undefined);
  if (referrers.length === 0) return;
  const changesById = new Map<string, ResourceChange[]>();
  for (const c of ctx.changes) {
    if (c.id === undefined) continue;
    changesById.set(c.id, [...(changesById.get(c.id) ?? []), c]);
  }
  const held = new Set<ResourceChange>();
  for (const c of ctx.changes) {
    if (c.id === undefined) continue;
    if (!c.operations.some((op) => op.method === 'DELETE' && op.phase === 'delete')) continue;
    const inTheWay: string[] = [];
    for (const kind of referrers) {
      if (!(kind.refersTo ?? []).includes(c.kind)) continue;
      for (const record of live.resources?.[kind.kind] ?? []) {
        const named = kind.liveReferences?.(record) ?? [];
        if (!named.some((r) => r.kind === c.kind && r.id === c.id)) continue;
        if (!stopsNaming(kind, record, c, desired, changesById, resolve)) {
          inTheWay.push(record.id);
        }
      }
    }
    if (inTheWay.length === 0) continue;
    held.add(c);
    // Not a refusal of the whole apply: the rest goes on, and the plan stays unconverged.
    ctx.blocked.push({
      address: c.address,
      kind: 'conflict',
      reason: `${c.id}: still named by live ${inTheWay.join(', ')}; not deleted until ${inTheWay.length === 1 ? 'it stops' : 'they stop'} naming it`,
    });
  }
  if (held.size === 0) return;
  const kept = ctx.changes.filter((c) => !held.has(c));
  ctx.changes.splice(0, ctx.changes.length, ...kept);
}

/** Whether this plan deletes `record`, or rewrites it to a declared state not naming `c`. */
function stopsNaming(
  kind: KindDefinition,
  record: LiveRecord,
  c: ResourceChange,
  desired: DesiredSet,
  changesById: ReadonlyMap<string, readonly ResourceChange[]>,
  resolve: ResolveReference,
): boolean {
  const changes = changesById.get(record.id) ?? [];
  if (changes.some((x) => x.operations.some((op) => op.method === 'DELETE'))) return true;
  const rewrite = changes.find(
    (x) => x.kind === kind.kind && x.operations.some((op) => op.method !== 'DELETE'),
  );
  if (rewrite === undefined) return false;
  const declared = declaredOfAny(desired, kind).find((d) => d.name === rewrite.name);
  if (declared === undefined) return false;
  const raw = kind.liveReferences?.(declared as unknown as LiveRecord) ?? [];
  if (raw.some((r) => r.kind === c.kind && r.id === c.id)) return false;
  return !(kind.references?.(declared) ?? []).some((ref) => {
    const found = ref.kind === c.kind ? resolve(ref) : undefined;
    return found !== undefined && found !== 'unchecked' && found.value === c.id;
  });
}

/** The declared resources of any kind: its own list in the set, or the generic one. */
function declaredOfAny(desired: DesiredSet, kind: KindDefinition): readonly Declared[] {
  if (kind.setKey !== undefined) return desired[kind.setKey] as unknown as readonly Declared[];
  return declaredOf(desired, kind);
}
