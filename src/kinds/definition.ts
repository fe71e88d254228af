/**
 * What a kind of resource is, in one place: the contract every kind's definition fills
 * (src/kinds/<kind>.ts) and everything generic reads — the observer lists each registered kind,
 * the loader validates its documents with its schema, the planner plans it (generically, or by
 * the kind's own planner where its API is not a flat collection), the executor sends its
 * operations through the route table, and import, status, metrics, the JSON Schema and the
 * manifest reference enumerate the registry (./index.ts).
 *
 * A definition is data plus pure functions: no I/O, no client (the observer is handed the
 * client; a definition only names which of its methods lists the kind).
 *
 * Adding a kind: write its definition, register it in ./index.ts, give the local server its
 * handlers and the route table its rows (src/api/routes.ts), and test it. Nothing in the
 * planner, the executor, the engine, the daemon or the CLI changes.
 */
import type { z } from 'zod';
import type { FieldPath } from '../manifest/paths.js';

/** Where a resource was declared (file relative to the manifest directory, 1-based). */
export interface DeclaredSource {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/**
 * A declared resource of a generic kind, as the loader hands it over: the schema's output plus
 * where it was written and which of its paths are sensitive.
 */
export interface Declared {
  readonly kind: string;
  readonly name: string;
  readonly source: DeclaredSource;
  readonly sensitive: readonly FieldPath[];
  /** `absent`: delete it (the only way a kind that is never pruned leaves the account). */
  readonly ensure?: 'present' | 'absent' | undefined;
  /** Left exactly as it is live. */
  readonly suspend?: boolean | undefined;
  /** Adopt this live resource (by ID) rather than create one. */
  readonly id?: string | undefined;
  /**
   * The keyed digest of its write-only fields' values (HMAC-SHA-256 under the controller's key)
   * bound to a writer (the actor the values are written as; undefined: not known), made where
   * manifests are loaded (src/manifest/digest.ts), so the key stays there: the planner compares
   * it with the one kept in the live record's `metadata` instead of the value nobody can read.
   */
  readonly digestFor?: ((writer: string | undefined) => string) | undefined;
  readonly [field: string]: unknown;
}

/** A live record of any kind: what a list call returns, an `id` at least. */
export interface LiveRecord {
  readonly id: string;
  readonly [field: string]: unknown;
}

/**
 * A reference from one resource to another, by the other's manifest name: `{ ref: office }` in
 * a policy's `restrict-ips`, a secret's `vault`, an endpoint's host on a reserved domain.
 */
export interface Reference {
  /** The kind referred to (a definition's `kind`, e.g. `ip_policy`). */
  readonly kind: string;
  /** Its manifest name. */
  readonly name: string;
  /** Where in the referring manifest, for a located error. */
  readonly path: FieldPath;
  /**
   * True when a live resource of that name satisfies it without a manifest (a domain reserved
   * by hand); false when only a declared resource does.
   */
  readonly liveSatisfies?: boolean | undefined;
  /**
   * Matched by the referred kind's natural key (`ownership.key`) rather than by manifest name:
   * the first of these keys declared or live is the one referred to (an endpoint's host: the
   * same domain, else the nearest wildcard covering it). `name` is then what is shown.
   */
  readonly keys?: readonly string[] | undefined;
  /**
   * Nothing in the referring manifest takes the referred resource's ID: the reference only
   * orders the plan (create it first, delete it last) and is checked (an endpoint's domain).
   */
  readonly orderOnly?: boolean | undefined;
  /**
   * The referrer is not created while the referred resource is not ready (`readiness`): the
   * plan blocks it, saying what is missing, unless the plan is told not to wait.
   */
  readonly requireReady?: boolean | undefined;
  /**
   * Checked only where the account uses the kind at all (one declared or live): an account
   * without any (a service that does not require them) is not held to it.
   */
  readonly onlyWhereUsed?: boolean | undefined;
  /**
   * The resource holding the one referred to (a secret's vault: names are unique only within
   * it). `validate` checks a declared one is in it, and, when the holder is declared, that the
   * one referred to is declared too.
   */
  readonly within?: { readonly kind: string; readonly name: string } | undefined;
}

/** How ready a live resource is to serve (a domain's certificate, its DNS). */
export interface Readiness {
  readonly state: 'ready' | 'pending' | 'error';
  /** In words, for plan, status and events: what is missing, or the service's message. */
  readonly message: string;
  /** DNS records the user must create for it to become ready. */
  readonly records?: readonly {
    readonly name: string;
    readonly type: 'CNAME';
    readonly target: string;
  }[];
}

/** A writable field of a flat kind: how to read it on each side, and how it may change. */
export interface FieldRule<D extends Declared = Declared, L extends LiveRecord = LiveRecord> {
  /** The field's name in the API's write body and in plans. */
  readonly name: string;
  /**
   * The desired value, from the manifest (`resolve` turns a reference into the live ID or into
   * the `{ created }` placeholder of a create earlier in the plan); undefined: not managed.
   */
  desired(d: D, resolve: (ref: Reference) => string | { readonly created: string }): unknown;
  /** The live value, normalised to compare with the desired one. */
  live(l: L): unknown;
  /** Cannot change in place: a difference replaces the resource (delete, then create). */
  readonly replace?: boolean | undefined;
  /**
   * Never read back (a secret's value): given only by `{ env }` or `{ file }`, compared through
   * the resource's keyed digest (`Declared.digestFor`, kept in `metadata`), sent when it differs
   * or when someone else wrote it since (`KindDefinition.writer`).
   */
  readonly writeOnly?: boolean | undefined;
  /** Its value is a secret: masked in every output. */
  readonly sensitive?: boolean | undefined;
  /** Sent on create only (the update body does not accept it). */
  readonly createOnly?: boolean | undefined;
}

/**
 * The manifest name `import` gave a live record of another kind (by its kind and ID), so that a
 * reference to it is written by name (`vault: { ref: prod }`); undefined when it imported none.
 */
export type ImportedNames = (kind: string, id: string) => string | undefined;

/** The API methods of a kind: rows of the route table, by client method name. */
export interface KindApi {
  readonly list: string;
  readonly create?: string | undefined;
  readonly update?: string | undefined;
  readonly delete?: string | undefined;
}

/** Who a live record belongs to, and which manifest it is. */
export type Ownership =
  /** An `edgesync/owner` mark and the manifest name in the record's metadata (edges, endpoints). */
  | { readonly by: 'metadata' }
  /**
   * A natural key the API keeps unique (a domain's host name, a vault's name): the record with
   * that key is the manifest's; nothing marks it ours, so orphans are never found by key alone.
   */
  | {
      readonly by: 'key';
      readonly key: (l: LiveRecord) => string;
      readonly declared: (d: Declared) => string;
    };

/** A declared child of a resource (an IP policy's rule), as its parent's definition reads it. */
export interface DeclaredChild {
  /** The child's key within its parent, canonical (a rule's range): live children match by it. */
  readonly key: string;
  /** Where in the parent's manifest, for messages. */
  readonly path: FieldPath;
  /** Field name -> desired value (the write body's fields). */
  readonly values: Readonly<Record<string, unknown>>;
}

/**
 * A collection of children that belong to one parent each but are listed account-wide in one
 * paginated list (an IP policy's rules: `GET /ip_policy_rules`, no per-policy listing). The
 * observer lists it once, beside its parent kind; the generic planner plans the children of
 * each declared parent within the parent's root (its operations run in order), in the order
 * `rank` gives.
 */
export interface ChildCollection {
  /** Its kind in the snapshot, the plan and the call counts (`ip_policy_rule`). */
  readonly kind: string;
  readonly plural: string;
  /** The client methods (rows of the route table). */
  readonly api: KindApi;
  /** The ID of the parent a live child belongs to. */
  parentOf(l: LiveRecord): string | undefined;
  /** A live child's key (the same text `declared` gives a declared one). */
  key(l: LiveRecord): string;
  /** The children a declared parent wants (validated by the schema: keys unique). */
  declared(d: Declared): readonly DeclaredChild[];
  /** The body field of a child's create naming its parent's ID (`ip_policy_id`). */
  readonly parentField: string;
  /** The fields compared between a declared child and its live one. */
  readonly fields: readonly {
    readonly name: string;
    live(l: LiveRecord): unknown;
    /** Cannot change in place: a difference deletes the child, then creates it. */
    readonly replace?: boolean | undefined;
  }[];
  /**
   * The rank of a child's step in its parent's sequence (lower first; equal ranks keep the
   * order of the keys): `create` (new), `replace` (its delete and its create, together),
   * `delete` (no longer declared), `update` (a PATCH of the fields that change in place).
   */
  rank(
    step: 'create' | 'replace' | 'delete' | 'update',
    values: Readonly<Record<string, unknown>>,
  ): number;
  /** Words for a child in plans and progress: `allow 10.0.0.0/8`. */
  describe(values: Readonly<Record<string, unknown>>): string;
}

export interface KindDefinition<D extends Declared = Declared, L extends LiveRecord = LiveRecord> {
  /** The plan's kind and the prefix of its addresses, snake_case: `reserved_domain`. */
  readonly kind: string;
  /** Manifest `kind:` values: the first is the current name, the rest aliases (`BotUser`). */
  readonly manifestKinds: readonly [string, ...string[]];
  /** The plural, snake_case, for counts, status and docs: `reserved_domains`. */
  readonly plural: string;
  /** One line for the manifest reference and `edgesync schema`. */
  readonly description: string;
  /**
   * The manifest document's schema (its `kind` literal included). Absent for the kinds whose
   * documents the loader shapes itself (edges with their routes, endpoints with their policy,
   * bot users: src/manifest/schema.ts).
   */
  readonly schema?: z.ZodType | undefined;
  /**
   * The kind's own planner in src/plan/ (`edges`, `cloud_endpoints`, `bot_users`): a kind whose
   * API is not one flat collection (routes and modules under an edge, host and port claims,
   * namesakes without an owner mark). Absent: the generic planner plans it from `fields`.
   */
  readonly planner?: 'edges' | 'cloud_endpoints' | 'bot_users' | undefined;
  /** Its list in the desired set and in the live snapshot, for the kinds with their own planner. */
  readonly setKey?: 'tlsEdges' | 'httpsEdges' | 'botUsers' | 'cloudEndpoints' | undefined;
  /** The API: its client methods (from the route table). */
  readonly api: KindApi;
  /**
   * When the account has no access to this kind (its list answers 403 with the no-access
   * state), it reads as none instead of failing the observation (edges on a sunset account).
   */
  readonly absentWithoutAccess?: boolean | undefined;
  /** How a live record is tied to its manifest. */
  readonly ownership: Ownership;
  /** Writable fields, for the generic planner (absent for a kind with its own planner). */
  readonly fields?: readonly FieldRule<D, L>[] | undefined;
  /**
   * The kinds its resources may refer to: the kind-level edges of the dependency graph (a
   * resource of one of them is deleted only after the resources of this kind being deleted).
   */
  readonly refersTo?: readonly string[] | undefined;
  /** The references a declared resource makes to other kinds. */
  references?(d: D): readonly Reference[];
  /**
   * The IDs of other kinds' resources a live record names (an endpoint's policy naming an IP
   * policy by ID): a resource so named is not deleted unless the plan deletes the record or
   * changes it to stop naming it (a deleted IP policy silently empties `restrict-ips`).
   */
  liveReferences?(l: L): readonly { readonly kind: string; readonly id: string }[];
  /** A collection of children listed account-wide, planned under each resource (IP rules). */
  readonly children?: ChildCollection | undefined;
  /**
   * The actor who last wrote a live record (the service's `last_updated_by`), for a kind with
   * write-only fields: a writer other than the one kept beside its digest wrote the value outside
   * Git. Absent, or undefined for a record: such writes cannot be told apart (digests only).
   */
  writer?(l: L): string | undefined;
  /** How ready a live record is; absent: always ready. */
  readiness?(l: L): Readiness;
  /**
   * A live record's fields as its manifest writes them, for `import` (which adds `kind`, `name`,
   * `id`, the labels of `metadata` and `protect` itself). A write-only field is given as any
   * string at its field's name: import makes it an `{ env }` reference to fill in. Absent: each
   * field's `live` value under its name, empty values left out (`importFields` in
   * src/apply/import.ts), which suits a kind whose manifest fields are its API fields.
   */
  toManifest?(
    l: L,
    names: ImportedNames,
    /** Its live children (`children`), when the kind has a child collection. */
    children?: readonly LiveRecord[],
  ): Record<string, unknown>;
  /**
   * Orphans (ours live, no manifest) are deleted (edges, endpoints). False: only `ensure:
   * absent` deletes one (a domain given back to the pool can be taken by anyone).
   */
  readonly prune: boolean;
  /**
   * Rank in the dependency order among kinds with no reference between them (lower first):
   * only a tie-breaker, references decide.
   */
  readonly order: number;
}

/** The address of a resource of a kind: `reserved_domain.app`. */
export function addressOf(kind: string, name: string): string {
  return `${kind}.${name}`;
}
