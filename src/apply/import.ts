/**
 * `edgesync import`, the pure part: live records -> manifest documents (one file per edge, cloud
 * endpoint or bot user), in the manifest format a user would have written: write shapes (Refs as IDs, via
 * the planner's `liveModuleToWrite`), `enabled: true` and the values the server fills by default
 * left out, server-made fields dropped. Owned edges keep their manifest name; foreign edges
 * (`all`) get a name derived from their first hostport and carry `id:`, so that applying the
 * imported file adopts them. Cloud endpoints are written as `kind: CloudEndpoint` with the
 * policy as a mapping: ours by their manifest name, unowned ones (`all`) by their host with
 * `id:` (adopted like edges); agent endpoints never, other owners' skipped with a note.
 *
 * Every other kind is imported from its definition (src/kinds/), with no code about the kind
 * here: a record claimed by its owner mark or natural key becomes one document, its fields read
 * back through the definition (`toManifest`, or each field's `live` value), `id:` written where
 * applying it adopts the record.
 *
 * Secrets: the API echoes `client_secret` and webhook `secret` in clear. One credential rule
 * holds for every kind (`moveCredentialsOut`): a value that is a secret by its field, or that
 * looks like a credential in free text (a description, a traffic policy), is never written to a
 * file: it becomes an `{ env: NAME }` reference with a generated variable name, and the caller
 * prints which variables to set (names only); a look-alike is also warned about.
 */

import { stringify } from 'yaml';
import type { z } from 'zod';
import type {
  BotUser,
  CloudEndpoint,
  HttpsEdge,
  HttpsRoute,
  LiveSnapshot,
  TlsEdge,
} from '../api/index.js';
import { compareCodeUnits } from '../compare.js';
import { moduleDefault } from '../hosted/defaults.js';
import { MODULES, type ModuleDefinition } from '../hosted/modules/index.js';
import {
  addressOf,
  type ImportedNames,
  KINDS,
  type KindDefinition,
  type LiveRecord,
} from '../kinds/index.js';
import { defaultEndpointBinding } from '../manifest/endpoint-url.js';
import { type ParsedMetadata, parseStoredMetadata } from '../manifest/metadata.js';
import type { FieldPath, Segment } from '../manifest/paths.js';
import { parsePolicyText } from '../manifest/policy-text.js';
import { objectKeys, takesReference } from '../manifest/refs.js';
import { NAME_PATTERN, SCHEMA_BY_KIND } from '../manifest/schema.js';
import { isSecretField } from '../manifest/secrets.js';
import { hasSecretField } from '../plan/cloud-endpoints.js';
import { liveModuleToWrite, type Plain, type PlainObject } from '../plan/normalize.js';
import { credentialLikeReason } from './credentials.js';

export interface ImportOptions {
  readonly owner: string;
  /** Unowned edges and cloud endpoints too (made by hand), with `id:` for adoption. */
  readonly all?: boolean | undefined;
  /** The `$schema` of the `# yaml-language-server:` first line. */
  readonly schemaUrl: string;
  /**
   * The kinds to import (default every registered kind): the four with planners of their own
   * as above, every other one generically (`genericFiles`).
   */
  readonly kinds?: readonly KindDefinition[] | undefined;
}

export interface ImportedFile {
  /** File name (no directory), e.g. `https-storefront.yaml`. */
  readonly file: string;
  /** The manifest `kind:` (`HTTPSEdge`, `ReservedDomain`). */
  readonly kind: string;
  readonly name: string;
  /** Set when the file adopts an unowned edge or cloud endpoint. */
  readonly adopts?: string;
  readonly text: string;
}

/** A secret replaced by an env reference: which variable, holding which live field. */
export interface SecretVariable {
  readonly env: string;
  /** Plan address of the resource, e.g. `https_edge.shop.route["/"]`. */
  readonly address: string;
  /** Field path inside the resource, e.g. `oauth.provider.google.client_secret`. */
  readonly path: string;
}

export interface ImportResult {
  readonly files: ImportedFile[];
  readonly secrets: SecretVariable[];
  /** Things left out or changed, in words. */
  readonly notes: string[];
  /**
   * Values that look like credentials (in descriptions, traffic policies): each moved out to a
   * variable, or written as it is where no reference can stand (said so).
   */
  readonly warnings: string[];
}

/** What the steps of one import share: the options, and what they collect. */
interface ImportContext {
  readonly options: ImportOptions;
  readonly header: string;
  readonly notes: string[];
  readonly warnings: string[];
  readonly secrets: SecretVariable[];
  readonly usedEnv: Set<string>;
  readonly names: { readonly TLSEdge: Set<string>; readonly HTTPSEdge: Set<string> };
  unmanaged: number;
}

type EdgeKind = 'TLSEdge' | 'HTTPSEdge';

/**
 * Live records to manifest files: edges, then cloud endpoints, then bot users, then every kind
 * planned generically, in the registry's order.
 */
export function importLive(live: LiveSnapshot, options: ImportOptions): ImportResult {
  const ctx: ImportContext = {
    options,
    header: `# yaml-language-server: $schema=${options.schemaUrl}\n`,
    notes: [],
    warnings: [],
    secrets: [],
    usedEnv: new Set(),
    names: { TLSEdge: new Set(), HTTPSEdge: new Set() },
    unmanaged: 0,
  };
  const files: ImportedFile[] = [];
  for (const { kind, edge } of edgesById(live)) {
    const file = edgeFile(ctx, kind, edge);
    if (file !== undefined) files.push(file);
  }
  const endpoints = endpointFiles(ctx, live.cloudEndpoints);
  files.push(...endpoints.files);
  ctx.notes.push(...endpoints.notes);
  const botNames = new Set<string>();
  for (const bot of [...live.botUsers].sort((a, b) => compareCodeUnits(a.id, b.id))) {
    const file = botFile(ctx, bot, botNames);
    if (file !== undefined) files.push(file);
  }
  files.push(...genericFiles(ctx, live, options.kinds ?? KINDS));
  if (ctx.unmanaged > 0) {
    const n = ctx.unmanaged;
    ctx.notes.push(
      `${n} edge${n === 1 ? '' : 's'} not managed by edgesync ${n === 1 ? 'was' : 'were'} skipped (import them with --all; applying adopts them)`,
    );
  }
  return { files, secrets: ctx.secrets, notes: ctx.notes, warnings: ctx.warnings };
}

/** Every live edge, TLS and HTTPS together, in ID order. */
function edgesById(live: LiveSnapshot): { kind: EdgeKind; edge: TlsEdge | HttpsEdge }[] {
  return [
    ...live.tlsEdges.map((edge) => ({ kind: 'TLSEdge' as const, edge })),
    ...live.httpsEdges.map((edge) => ({ kind: 'HTTPSEdge' as const, edge })),
  ].sort((a, b) => compareCodeUnits(a.edge.id, b.edge.id));
}

/**
 * Whether an edge is imported, and as ours (`true`) or adopted (`false`): another owner's edge
 * and a crafted manifest name are skipped with a note, an unowned one without `--all` counted.
 */
function edgeOwnership(
  ctx: ImportContext,
  edge: TlsEdge | HttpsEdge,
  meta: ReturnType<typeof parseStoredMetadata>,
): boolean | undefined {
  if (meta?.owner === ctx.options.owner) {
    if (meta.name === undefined || NAME_PATTERN.test(meta.name)) return true;
    // The name becomes a file name: a crafted `edgesync/name` must never escape --out.
    ctx.notes.push(
      `${edge.id}: its edgesync/name ${JSON.stringify(meta.name)} is not a valid manifest name, skipped`,
    );
    return undefined;
  }
  if (meta?.owner !== undefined) {
    ctx.notes.push(
      `${edge.id}: owned by "${meta.owner}", skipped (import with --owner ${meta.owner})`,
    );
    return undefined;
  }
  if (ctx.options.all !== true) {
    ctx.unmanaged += 1;
    return undefined;
  }
  return false;
}

/** One edge's file, or undefined when it is not imported. */
function edgeFile(
  ctx: ImportContext,
  kind: EdgeKind,
  edge: TlsEdge | HttpsEdge,
): ImportedFile | undefined {
  const meta = parseStoredMetadata(edge.metadata);
  const ours = edgeOwnership(ctx, edge, meta);
  if (ours === undefined) return undefined;
  const wanted = ours && meta?.name !== undefined ? meta.name : derivedName(edge);
  const name = unique(wanted, ctx.names[kind]);
  if (name !== wanted) ctx.notes.push(`${edge.id}: named "${name}" ("${wanted}" was taken)`);
  const doc = edgeDocument(ctx, kind, edge, name, ours, meta);
  const slug = kind === 'TLSEdge' ? 'tls' : 'https';
  return {
    file: `${slug}-${name}.yaml`,
    kind,
    name,
    ...(ours ? {} : { adopts: edge.id }),
    text: ctx.header + stringify(doc, { lineWidth: 0 }),
  };
}

/** An edge as the manifest document a user would have written. */
function edgeDocument(
  ctx: ImportContext,
  kind: EdgeKind,
  edge: TlsEdge | HttpsEdge,
  name: string,
  ours: boolean,
  meta: ReturnType<typeof parseStoredMetadata>,
): Record<string, unknown> {
  const owner = kind === 'TLSEdge' ? 'tls_edge' : 'https_edge';
  const doc: Record<string, unknown> = { kind, name };
  if (!ours) doc.id = edge.id;
  if (edge.description) doc.description = edge.description;
  if (meta === undefined) {
    ctx.notes.push(
      `${edge.id}: its metadata is not a set of labels; adopting it replaces the metadata`,
    );
  } else if (Object.keys(meta.labels).length > 0) {
    doc.metadata = sortedObject(meta.labels);
  }
  if (meta?.protect === true && ours) doc.protect = true;
  if (edge.hostports.length > 0) doc.hostports = [...edge.hostports];
  const fields = edge as unknown as Readonly<Record<string, unknown>>;
  for (const [module, def] of Object.entries(MODULES[owner])) {
    const value = manifestModule(module, def, fields[module]);
    if (value !== undefined) doc[module] = value;
  }
  if (kind === 'HTTPSEdge') {
    const routes = (edge as HttpsEdge).routes
      .slice()
      .sort((a, b) => compareCodeUnits(a.id, b.id))
      .map((route) => manifestRoute(route, edge.id, ctx.notes));
    if (routes.length > 0) doc.routes = routes;
  }
  moveCredentialsOut(ctx, SCHEMA_BY_KIND[kind], doc, `${owner}.${name}`);
  return doc;
}

/**
 * Our cloud endpoints as `kind: CloudEndpoint` manifests, the policy as a YAML mapping with its
 * secret fields as `{ env }` references. Agent endpoints are never imported; other owners' are
 * skipped with a note; unowned ones (made by hand) are imported with `all`, named after their
 * host and carrying `id:`, so that applying the file adopts the endpoint (one PATCH writing the
 * owner mark) rather than create a second one on the same URL. Ours are named first, so an
 * adopted one never takes the name of one we manage.
 */
function endpointFiles(
  ctx: ImportContext,
  live: readonly CloudEndpoint[],
): { files: ImportedFile[]; notes: string[] } {
  const { owner } = ctx.options;
  const files: ImportedFile[] = [];
  const notes: string[] = [];
  const names = new Set<string>();
  const unowned: CloudEndpoint[] = [];
  for (const e of [...live].sort((a, b) => compareCodeUnits(a.id, b.id))) {
    if (e.type !== 'cloud') continue;
    const meta = parseStoredMetadata(e.metadata);
    if (meta?.owner !== owner || meta.name === undefined) {
      if (meta?.owner !== undefined && meta.owner !== owner) {
        notes.push(
          `${e.id}: owned by "${meta.owner}", skipped (import with --owner ${meta.owner})`,
        );
      } else unowned.push(e);
      continue;
    }
    const name = meta.name;
    if (!NAME_PATTERN.test(name) || names.has(name)) {
      notes.push(
        `${e.id}: its edgesync/name ${JSON.stringify(name)} is not a valid or unique manifest name, skipped`,
      );
      continue;
    }
    names.add(name);
    files.push(endpointFile(ctx, e, name, meta.labels, meta.protect, notes));
  }
  if (ctx.options.all !== true) {
    if (unowned.length > 0) {
      notes.push(
        `${unowned.length} cloud endpoint(s) not managed by edgesync skipped (import them with --all; applying adopts them)`,
      );
    }
    return { files, notes };
  }
  for (const e of unowned) {
    const wanted = slugName([hostOf(e.url), e.id]);
    const name = unique(wanted, names);
    if (name !== wanted) notes.push(`${e.id}: named "${name}" ("${wanted}" was taken)`);
    const meta = parseStoredMetadata(e.metadata);
    if (meta === undefined) {
      notes.push(`${e.id}: its metadata is not a set of labels; adopting it replaces the metadata`);
    }
    files.push(endpointFile(ctx, e, name, meta?.labels ?? {}, false, notes, e.id));
  }
  return { files, notes };
}

/** One endpoint's file; `adopts`: the ID its `id:` names, for an endpoint made by hand. */
function endpointFile(
  ctx: ImportContext,
  e: CloudEndpoint,
  name: string,
  labels: Readonly<Record<string, string>>,
  protect: boolean,
  notes: string[],
  adopts?: string,
): ImportedFile {
  const doc = {
    kind: 'CloudEndpoint',
    name,
    ...(adopts === undefined ? {} : { id: adopts }),
    ...endpointDocument(e, labels, protect, notes),
  };
  moveCredentialsOut(ctx, SCHEMA_BY_KIND.CloudEndpoint, doc, `cloud_endpoint.${name}`);
  return {
    file: `endpoint-${name}.yaml`,
    kind: 'CloudEndpoint',
    name,
    ...(adopts === undefined ? {} : { adopts }),
    text: ctx.header + stringify(doc, { lineWidth: 0 }),
  };
}

/** The host of an endpoint's URL (`app.example.com` of `https://app.example.com`). */
function hostOf(url: string): string {
  const rest = url.slice(url.indexOf('://') + 3);
  return rest.replace(/[:/].*$/, '');
}

/** One endpoint's fields as a manifest writes them: defaults and empty values left out. */
function endpointDocument(
  e: CloudEndpoint,
  labels: Readonly<Record<string, string>>,
  protect: boolean,
  notes: string[],
): Record<string, unknown> {
  const doc: Record<string, unknown> = { url: e.url };
  if (e.description) doc.description = e.description;
  if (Object.keys(labels).length > 0) doc.metadata = sortedObject(labels);
  const bindings = e.bindings ?? [];
  if (
    bindings.length > 0 &&
    !(bindings.length === 1 && bindings[0] === defaultEndpointBinding(e.url))
  ) {
    doc.bindings = [...bindings];
  }
  if (e.pooling_enabled === true) doc.pooling_enabled = true;
  if (protect) doc.protect = true;
  const policy = parsePolicyText(e.traffic_policy ?? '');
  if (typeof policy === 'object' && policy !== null && !Array.isArray(policy)) {
    doc.traffic_policy = policy;
  } else {
    notes.push(`${e.id}: its traffic policy is not a YAML mapping, written as the text it is`);
    doc.traffic_policy = e.traffic_policy ?? '';
  }
  return doc;
}

function botFile(ctx: ImportContext, bot: BotUser, names: Set<string>): ImportedFile | undefined {
  const { notes, header } = ctx;
  if (!NAME_PATTERN.test(bot.name)) {
    notes.push(`bot user ${bot.id}: name "${bot.name}" is not a valid manifest name, skipped`);
    return undefined;
  }
  if (names.has(bot.name)) {
    notes.push(`bot user ${bot.id}: another bot user is named "${bot.name}", skipped`);
    return undefined;
  }
  names.add(bot.name);
  // Under the current name of the kind (BotUser, the former one, means the same).
  const doc: Record<string, unknown> = { kind: 'ServiceUser', name: bot.name };
  if (!bot.active) doc.active = false;
  moveCredentialsOut(ctx, SCHEMA_BY_KIND.BotUser, doc, `bot_user.${bot.name}`);
  return {
    file: `bot-${bot.name}.yaml`,
    kind: 'ServiceUser',
    name: bot.name,
    text: header + stringify(doc, { lineWidth: 0 }),
  };
}

/** A live record of a generic kind that import claims, and the manifest name it gets. */
interface Claim {
  readonly kind: KindDefinition;
  readonly record: LiveRecord;
  readonly name: string;
  /** Written with `id:`: no mark of this owner names it so, applying the file adopts it. */
  readonly adopt: boolean;
  readonly meta: ParsedMetadata | undefined;
}

/**
 * The files of every kind planned generically (a definition without a planner of its own, with
 * a schema): one document per live record this owner can claim, by its owner mark or, for a
 * kind keyed by a natural key, by that key; with `--all`, unmarked records of a kind owned by
 * its mark too. Names are decided for every kind first, so that a reference to a record of
 * another kind is written by the name that record's file gets.
 */
function genericFiles(
  ctx: ImportContext,
  live: LiveSnapshot,
  kinds: readonly KindDefinition[],
): ImportedFile[] {
  const claims = kinds
    .filter((k) => k.planner === undefined && k.schema !== undefined)
    .flatMap((kind) => claimsOf(ctx, kind, live.resources?.[kind.kind] ?? []));
  const byId = new Map(claims.map((c) => [addressOf(c.kind.kind, c.record.id), c.name]));
  const names: ImportedNames = (kind, id) => byId.get(addressOf(kind, id));
  return claims.map((c) => genericFile(ctx, c, names, childrenOf(live, c.kind, c.record.id)));
}

/** The live children (a policy's rules, listed account-wide) of one record. */
function childrenOf(live: LiveSnapshot, kind: KindDefinition, id: string): LiveRecord[] {
  const children = kind.children;
  if (children === undefined) return [];
  return (live.resources?.[children.kind] ?? []).filter((c) => children.parentOf(c) === id);
}

function claimsOf(
  ctx: ImportContext,
  kind: KindDefinition,
  records: readonly LiveRecord[],
): Claim[] {
  const used = new Set<string>();
  const claims: Claim[] = [];
  let unmanaged = 0;
  for (const record of [...records].sort((a, b) => compareCodeUnits(a.id, b.id))) {
    const metadata = typeof record.metadata === 'string' ? record.metadata : undefined;
    const meta = parseStoredMetadata(metadata);
    const wanted = claimOf(ctx, kind, record, meta);
    if (wanted === 'unmanaged') unmanaged += 1;
    if (typeof wanted !== 'object') continue;
    const name = unique(wanted.name, used);
    if (name !== wanted.name) {
      ctx.notes.push(`${record.id}: named "${name}" ("${wanted.name}" was taken)`);
    }
    if (meta === undefined) {
      ctx.notes.push(
        `${record.id}: its metadata is not a set of labels; adopting it replaces the metadata`,
      );
    }
    // A second record under a name already taken is only ever reached by its ID.
    claims.push({ kind, record, name, adopt: wanted.adopt || name !== wanted.name, meta });
  }
  if (unmanaged > 0) {
    const noun = (unmanaged === 1 ? kind.kind : kind.plural).replaceAll('_', ' ');
    ctx.notes.push(
      `${unmanaged} ${noun} not managed by edgesync ${unmanaged === 1 ? 'was' : 'were'} skipped (import them with --all; applying adopts them)`,
    );
  }
  return claims;
}

/**
 * The name a record is imported under, and whether applying the file adopts it; undefined when
 * it is skipped (said in a note), `unmanaged` for an unmarked record of a kind owned by its mark
 * (imported with `--all` only).
 */
function claimOf(
  ctx: ImportContext,
  kind: KindDefinition,
  record: LiveRecord,
  meta: ParsedMetadata | undefined,
): { readonly name: string; readonly adopt: boolean } | 'unmanaged' | undefined {
  const { owner } = ctx.options;
  if (meta?.owner === owner && meta.name !== undefined) {
    if (NAME_PATTERN.test(meta.name)) return { name: meta.name, adopt: false };
    // The name becomes a file name: a crafted `edgesync/name` must never escape --out.
    ctx.notes.push(
      `${record.id}: its edgesync/name ${JSON.stringify(meta.name)} is not a valid manifest name, skipped`,
    );
    return undefined;
  }
  if (meta?.owner !== undefined && meta.owner !== owner) {
    ctx.notes.push(
      `${record.id}: owned by "${meta.owner}", skipped (import with --owner ${meta.owner})`,
    );
    return undefined;
  }
  const ownership = kind.ownership;
  if (ownership.by === 'metadata' && ctx.options.all !== true) return 'unmanaged';
  const key = ownership.by === 'key' ? ownership.key(record) : undefined;
  return { name: slugName([key, record.name, record.id]), adopt: true };
}

/** One claimed record as the manifest document a user would have written. */
function genericFile(
  ctx: ImportContext,
  claim: Claim,
  names: ImportedNames,
  children: readonly LiveRecord[],
): ImportedFile {
  const { kind, record, name, meta } = claim;
  const schema = kind.schema as z.ZodType;
  // Import's own fields only where the kind's manifest has them (a schema that is no plain
  // object lists no keys: then it is trusted to).
  const keys = objectKeys(schema);
  const accepts = (key: string) => keys.length === 0 || keys.includes(key);
  const manifestKind = kind.manifestKinds[0];
  const doc: Record<string, unknown> = { kind: manifestKind, name };
  if (claim.adopt && accepts('id')) doc.id = record.id;
  const fields = kind.toManifest?.(record, names, children) ?? importFields(kind, record);
  // A copy: the credential pass rewrites the document in place, never the live record.
  Object.assign(doc, JSON.parse(JSON.stringify(fields)) as Record<string, unknown>);
  const labels = meta?.labels ?? {};
  if (Object.keys(labels).length > 0 && accepts('metadata')) doc.metadata = sortedObject(labels);
  if (meta?.protect === true && !claim.adopt && accepts('protect')) doc.protect = true;
  const secret = new Set(
    (kind.fields ?? [])
      .filter((f) => f.sensitive === true || f.writeOnly === true)
      .map((f) => f.name),
  );
  moveCredentialsOut(ctx, schema, doc, addressOf(kind.kind, name), secret);
  return {
    file: fileOfKind(kind, name),
    kind: manifestKind,
    name,
    ...(claim.adopt ? { adopts: record.id } : {}),
    text: ctx.header + stringify(doc, { lineWidth: 0 }),
  };
}

/** `reserved-domain-app.yaml`: the plan kind, hyphenated, then the name. */
function fileOfKind(kind: KindDefinition, name: string): string {
  return `${kind.kind.replaceAll('_', '-')}-${name}.yaml`;
}

/**
 * A kind's manifest fields read back through its definition (the default of `toManifest`):
 * each field's normalised live value under its name, empty ones left out; a write-only field,
 * never read back, as an empty string that the credential pass makes an `{ env }` reference.
 */
function importFields(kind: KindDefinition, record: LiveRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const rule of kind.fields ?? []) {
    if (rule.writeOnly === true) {
      out[rule.name] = '';
      continue;
    }
    const value = rule.live(record);
    if (!isEmptyValue(value)) out[rule.name] = value;
  }
  return out;
}

/** What a manifest leaves out rather than writes: nothing, an empty text, list or mapping. */
function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function manifestRoute(
  route: HttpsRoute,
  edgeId: string,
  notes: string[],
): Record<string, unknown> {
  const doc: Record<string, unknown> = { match_type: route.match_type, match: route.match };
  if (route.description) doc.description = route.description;
  const meta = parseStoredMetadata(route.metadata);
  if (meta === undefined) {
    notes.push(
      `${edgeId} route ${route.match}: its metadata is not a set of labels; applying replaces it`,
    );
  } else if (Object.keys(meta.labels).length > 0) {
    doc.metadata = sortedObject(meta.labels);
  }
  const fields = route as unknown as Readonly<Record<string, unknown>>;
  for (const [module, def] of Object.entries(MODULES.route)) {
    const value = manifestModule(module, def, fields[module]);
    if (value !== undefined) doc[module] = value;
  }
  return doc;
}

/**
 * One live module in manifest form, or undefined when unset. Only the fields of the owner's
 * definition are written (an HTTPS edge's TLS termination has no `terminate_at`).
 */
function manifestModule(
  module: string,
  def: ModuleDefinition,
  read: unknown,
): PlainObject | undefined {
  const raw = liveModuleToWrite(module, read);
  if (raw === undefined) return undefined;
  // Plain JSON data from here on (the read shapes are JSON already; this only drops undefined).
  const write = JSON.parse(JSON.stringify(raw)) as PlainObject;
  const out: PlainObject = {};
  for (const [key, value] of Object.entries(write)) {
    const field = def.fields[key];
    if (field === undefined || (key === 'enabled' && value === true)) continue;
    // Complete and minimal: a field with a documented default is written exactly when its live
    // value differs from that default (so a hand-set `min_version: "1.0"` or SAML
    // `allow_idp_initiated: false` survives), and never when it equals it.
    const d = moduleDefault(module, key, write);
    if (d !== undefined) {
      if (value !== d && value !== null) out[key] = value;
      continue;
    }
    const clean = withoutZeros(value, key);
    if (clean !== undefined) out[key] = clean;
  }
  // A one-of mapping (OAuth's provider) names its choice even when every field of it is a zero
  // value: the service's managed OAuth application has no settings at all (`google: {}`).
  for (const [key, field] of Object.entries(def.fields)) {
    const choice = field.oneOf === true ? namedChoice(write[key]) : undefined;
    if (choice !== undefined) out[key] = choice;
  }
  return policyAsMapping(module, out);
}

/**
 * A traffic policy module's text as the YAML mapping it holds, so a review reads a policy, not
 * an escaped JSON string. Only when the mapping is sent back as exactly that text (the manifest
 * sends a mapping as its JSON): an imported set plans no change. A policy holding a secret keeps
 * its text (and its warning): a mapping would put the secret in the file as a field.
 */
function policyAsMapping(module: string, out: PlainObject): PlainObject {
  const text = out.value;
  if (module !== 'traffic_policy' || typeof text !== 'string') return out;
  const doc = parsePolicyText(text);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return out;
  if (JSON.stringify(doc) !== text || hasSecretField(doc)) return out;
  return { ...out, value: doc as PlainObject };
}

/** The one key of a one-of mapping that is set, with its settings less their zero values. */
function namedChoice(value: Plain | undefined): Plain | undefined {
  if (value === undefined || typeof value !== 'object' || value === null || Array.isArray(value))
    return undefined;
  const named = Object.entries(value).find(([, v]) => v !== null && typeof v === 'object');
  if (named === undefined) return undefined;
  const [name, settings] = named;
  return { [name]: withoutZeros(settings, name) ?? {} };
}

/** Drops what a manifest would not write: nulls, empty lists and maps, `false` flags. */
function withoutZeros(value: Plain, key: string): Plain | undefined {
  if (value === null) return undefined;
  if (value === false && key !== 'enabled') return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value;
  if (typeof value === 'object') {
    const out: PlainObject = {};
    for (const [k, v] of Object.entries(value)) {
      const c = withoutZeros(v, k);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value;
}

const NO_FIELDS: ReadonlySet<string> = new Set();

/** The fields of a resource (or route) that hold free text, where a credential may hide. */
const FREE_TEXT: ReadonlySet<Segment> = new Set(['description', 'metadata', 'traffic_policy']);

/**
 * The one credential rule of `import`, the same for every kind: over a finished document, a
 * string that is a secret by its field (`isSecretField`: a client secret, a webhook secret, a
 * credential header, a policy action's secret config) or that looks like a credential in free
 * text (`credentialLikeReason`: a description, a label, a traffic policy) is never written in clear. It
 * becomes an `{ env: EDGESYNC_... }` reference, listed as a variable to set; a look-alike is
 * also warned about. Where the manifest takes no reference (a CEL expression, a rule's name, a
 * set-vars value: the resolver's own rule says where one may stand), the value stays as it is
 * and the warning says so, to be moved out by hand.
 */
function moveCredentialsOut(
  ctx: ImportContext,
  schema: z.ZodType,
  doc: Record<string, unknown>,
  address: string,
  /** Top-level fields that are secret by the kind's definition (sensitive, write-only). */
  secretFields: ReadonlySet<string> = NO_FIELDS,
): void {
  const checked = (text: string, path: FieldPath): unknown => {
    const place = placeOf(doc, address, path);
    const secret =
      isSecretField(path) || (path.length === 1 && secretFields.has(path[0] as string));
    const why =
      !secret && FREE_TEXT.has(place.field[0] as Segment) ? credentialLikeReason(text) : undefined;
    if (!secret && why === undefined) return text;
    const shown = `${place.address} ${place.field.join('.')}`;
    if (!takesReference(schema, path, doc)) {
      ctx.warnings.push(
        `${shown} looks like it holds ${why ?? 'a secret'}; this field takes no { env } reference, so it is written to the manifest as it is: move it out before committing`,
      );
      return text;
    }
    const env = uniqueEnv(`${place.prefix}_${place.field.join('_')}`, ctx.usedEnv);
    ctx.secrets.push({ env, address: place.address, path: place.field.join('.') });
    if (why !== undefined) {
      ctx.warnings.push(
        `${shown} looks like it holds ${why}; it is written as { env: ${env} } (set it to the live value)`,
      );
    }
    return { env };
  };
  const visit = (value: unknown, path: Segment[]): unknown => {
    if (typeof value === 'string') return checked(value, path);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = visit(value[i], [...path, i]);
      return value;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = visit(record[key], [...path, key]);
    return value;
  };
  visit(doc, []);
}

/**
 * Where a path of a document belongs: the resource, or a route (`<address>.route["/api"]`),
 * the field inside it, and the prefix of its variable's name (`https_edge_shop_route1`).
 */
function placeOf(
  doc: Record<string, unknown>,
  address: string,
  path: FieldPath,
): { address: string; field: FieldPath; prefix: string } {
  const prefix = address.replace('.', '_');
  if (path[0] !== 'routes' || typeof path[1] !== 'number') return { address, field: path, prefix };
  const route = (doc.routes as Record<string, unknown>[])[path[1]];
  return {
    address: `${address}.route[${JSON.stringify(route?.match)}]`,
    field: path.slice(2),
    prefix: `${prefix}_route${path[1] + 1}`,
  };
}

/** A manifest name from an edge's first hostport's host, else from its ID. */
function derivedName(edge: TlsEdge | HttpsEdge): string {
  const host = edge.hostports[0]?.replace(/:\d+$/, '') ?? '';
  return slugName([host, edge.id]);
}

/** The first candidate that makes a valid manifest name once slugged; `imported` if none. */
function slugName(candidates: readonly unknown[]): string {
  for (const c of candidates) {
    if (typeof c !== 'string') continue;
    const slug = c
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
      .slice(0, 63)
      .replace(/[^a-z0-9]+$/, '');
    if (NAME_PATTERN.test(slug)) return slug;
  }
  return 'imported';
}

function unique(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate); n++) {
    const suffix = `-${n}`;
    candidate = `${name.slice(0, 63 - suffix.length).replace(/[^a-z0-9]+$/, '')}${suffix}`;
  }
  used.add(candidate);
  return candidate;
}

/** `EDGESYNC_` + the upper-cased path, with anything but letters and digits as `_`. */
function uniqueEnv(path: string, used: Set<string>): string {
  const base = `EDGESYNC_${path
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')}`;
  let env = base;
  for (let n = 2; used.has(env); n++) env = `${base}_${n}`;
  used.add(env);
  return env;
}

function sortedObject(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(labels).sort(compareCodeUnits)) out[k] = labels[k] as string;
  return out;
}
