/**
 * The rules across documents (names unique per kind, adopted IDs unique, hostports unique across
 * all edges, a cloud endpoint's URL and binding shared only by pooling endpoints and never on a
 * host and port an edge serves, natural keys unique, references to other kinds), kept as an
 * index: each document contributes entries under keys (its name, its hostports, ...), and a
 * rule's findings are worked out per key from the entries there, in the set's order (the first
 * entry is the one defined first). A changed file takes its documents' entries out and puts the
 * new ones in; only the keys they touch, and the documents whose findings read those keys, are
 * looked at again. A fresh index fed every document is the full check: one code path, so a
 * daemon's kept index reports exactly what a fresh load reports. Pure: positions come from an
 * injected `where`, the order from an injected `before`.
 */
import { addressOf, type Declared, KINDS, kindOfManifest, type Reference } from '../kinds/index.js';
import { defaultBinding, parseEndpointUrl } from './endpoint-url.js';
import type { FieldPath } from './paths.js';
import { documentReferences } from './references.js';
import { genericKindOf, isServiceUser } from './schema.js';
import type { DocumentValue } from './semantics.js';
import { didYouMean } from './suggest.js';

/** What the index needs of a document: its value (the handle itself is the caller's). */
export interface AcrossDoc {
  readonly value: DocumentValue;
}

export interface AcrossIssue<D> {
  readonly doc: D;
  readonly path: FieldPath;
  readonly message: string;
}

export interface AcrossOptions<D> {
  /** `file:line:column` of a path in a document, to name the other side of a conflict. */
  readonly where: (doc: D, path: FieldPath) => string;
  /** The set's order: negative when `a` comes first (the first of a name is the original). */
  readonly before: (a: D, b: D) => number;
}

/** One document's entry under a key; `index` orders a document's entries (its hostports). */
interface Entry<D> {
  readonly doc: D;
  readonly index: number;
}

/** What a document put into the index, to take it out again. */
interface Contribution {
  /** Keys of groups it has entries in. */
  readonly groups: readonly string[];
  /** Kinds whose declared names it counts in (`declared`). */
  readonly declares: readonly { readonly kind: string; readonly names: readonly string[] }[];
  /** Keys its own findings read (references, an endpoint's host and port). */
  readonly reads: readonly string[];
}

type EndpointValue = Extract<DocumentValue, { kind: 'CloudEndpoint' }>;

// Key namespaces: the first character says which rule a group belongs to.
const NAME = 'n';
const ID = 'i';
const HOSTPORT = 'h';
const CLAIM = 'c';
const NATURAL_KEY = 'k';
const HELD = 'a';
const ABSENT = 'x';
/** Read by a reference to a kind: any change to the names declared of that kind. */
const DECLARED = 'd';

const key = (space: string, ...parts: string[]): string => `${space}\0${parts.join('\0')}`;

/**
 * The index. `update` takes documents out and puts documents in; `issues` is every finding of
 * the rules across the documents now in it (in no particular order: callers sort).
 */
export class AcrossIndex<D extends AcrossDoc> {
  readonly #options: AcrossOptions<D>;
  readonly #groups = new Map<string, Entry<D>[]>();
  readonly #contributions = new Map<D, Contribution>();
  /** Kind -> declared names (and `\0`natural keys) with how many documents declare each. */
  readonly #declared = new Map<string, Map<string, number>>();
  /** Key -> the documents whose own findings read it. */
  readonly #readers = new Map<string, Set<D>>();
  /** Findings of a group's rule, by key (only keys with findings). */
  readonly #groupIssues = new Map<string, AcrossIssue<D>[]>();
  /** Findings a document's references and claims make (only documents with findings). */
  readonly #docIssues = new Map<D, AcrossIssue<D>[]>();

  constructor(options: AcrossOptions<D>) {
    this.#options = options;
  }

  get size(): number {
    return this.#contributions.size;
  }

  /** Takes `removed` out and puts `added` in, then works out again what they touched. */
  update(removed: Iterable<D>, added: Iterable<D>): void {
    const touched = new Set<string>();
    const evaluate = new Set<D>();
    for (const doc of removed) this.#remove(doc, touched);
    for (const doc of added) {
      this.#add(doc, touched);
      evaluate.add(doc);
    }
    for (const k of touched) {
      this.#workOut(k);
      for (const reader of this.#readers.get(k) ?? []) evaluate.add(reader);
    }
    for (const doc of evaluate) {
      if (!this.#contributions.has(doc)) continue;
      const found = this.#ownFindings(doc);
      if (found.length === 0) this.#docIssues.delete(doc);
      else this.#docIssues.set(doc, found);
    }
  }

  issues(): AcrossIssue<D>[] {
    const out: AcrossIssue<D>[] = [];
    for (const list of this.#groupIssues.values()) out.push(...list);
    for (const list of this.#docIssues.values()) out.push(...list);
    return out;
  }

  #remove(doc: D, touched: Set<string>): void {
    const c = this.#contributions.get(doc);
    if (c === undefined) return;
    this.#contributions.delete(doc);
    this.#docIssues.delete(doc);
    for (const k of c.groups) {
      const list = this.#groups.get(k);
      if (list === undefined) continue;
      const kept = list.filter((e) => e.doc !== doc);
      if (kept.length === 0) this.#groups.delete(k);
      else this.#groups.set(k, kept);
      touched.add(k);
    }
    for (const { kind, names } of c.declares) {
      const counts = this.#declared.get(kind);
      for (const name of names) {
        const n = (counts?.get(name) ?? 0) - 1;
        if (n <= 0) counts?.delete(name);
        else counts?.set(name, n);
      }
      if (counts?.size === 0) this.#declared.delete(kind);
      touched.add(key(DECLARED, kind));
    }
    for (const k of c.reads) {
      const readers = this.#readers.get(k);
      readers?.delete(doc);
      if (readers?.size === 0) this.#readers.delete(k);
    }
  }

  #add(doc: D, touched: Set<string>): void {
    const groups: string[] = [];
    const put = (k: string, index = 0): void => {
      this.#insert(k, { doc, index });
      if (groups[groups.length - 1] !== k) groups.push(k);
      touched.add(k);
    };
    const { value } = doc;
    const kind = kindOfManifest(value.kind);
    // Per kind, not per `kind:` name: a ServiceUser and a BotUser of one name are one record.
    put(key(NAME, kind?.kind ?? value.kind, value.name));
    const reads: string[] = [];
    if (!isServiceUser(value) && genericKindOf(value.kind) === undefined) {
      if (value.kind === 'CloudEndpoint') {
        const claim = claimOf(value);
        if (claim !== undefined) {
          put(key(CLAIM, claim.key));
          reads.push(key(HOSTPORT, claim.hostport));
        }
      } else {
        if (value.id !== undefined) put(key(ID, value.id));
        value.hostports.forEach((hostport, index) => {
          put(key(HOSTPORT, hostport.toLowerCase()), index);
        });
      }
    }
    const declares: { kind: string; names: string[] }[] = [];
    const d = value as unknown as Declared;
    if (kind !== undefined) {
      const absent = d.ensure === 'absent';
      put(key(absent ? ABSENT : HELD, addressOf(kind.kind, value.name)));
      if (!absent) {
        const names = [d.name];
        if (kind.ownership.by === 'key' && kind.schema !== undefined) {
          const natural = kind.ownership.declared(d);
          names.push(`\0${natural}`);
          put(key(NATURAL_KEY, kind.kind, natural));
        }
        declares.push({ kind: kind.kind, names });
        let counts = this.#declared.get(kind.kind);
        if (counts === undefined) {
          counts = new Map();
          this.#declared.set(kind.kind, counts);
        }
        for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
        touched.add(key(DECLARED, kind.kind));
      }
    }
    for (const ref of kind?.references?.(d) ?? []) {
      if (ref.within === undefined) reads.push(key(DECLARED, ref.kind));
    }
    for (const ref of documentReferences(value)) {
      if (ref.within === undefined) continue;
      const address = addressOf(ref.kind, ref.name);
      reads.push(key(HELD, address), key(ABSENT, address));
      reads.push(key(HELD, addressOf(ref.within.kind, ref.within.name)));
    }
    for (const k of reads) {
      let readers = this.#readers.get(k);
      if (readers === undefined) {
        readers = new Set();
        this.#readers.set(k, readers);
      }
      readers.add(doc);
    }
    this.#contributions.set(doc, { groups, declares, reads });
  }

  /** Puts an entry in its place in the set's order (groups hold one entry, seldom more). */
  #insert(k: string, entry: Entry<D>): void {
    const list = this.#groups.get(k);
    if (list === undefined) {
      this.#groups.set(k, [entry]);
      return;
    }
    const { before } = this.#options;
    let at = list.length;
    while (at > 0) {
      const prev = list[at - 1] as Entry<D>;
      const order = before(prev.doc, entry.doc) || prev.index - entry.index;
      if (order <= 0) break;
      at -= 1;
    }
    list.splice(at, 0, entry);
  }

  /** The findings of the rule of group `k`, from its entries in the set's order. */
  #workOut(k: string): void {
    const list = this.#groups.get(k);
    const found = list === undefined ? [] : this.#groupFindings(k[0] as string, list);
    if (found.length === 0) this.#groupIssues.delete(k);
    else this.#groupIssues.set(k, found);
  }

  #groupFindings(space: string, list: readonly Entry<D>[]): AcrossIssue<D>[] {
    const first = list[0];
    if (first === undefined || list.length === 1) return [];
    const { where } = this.#options;
    const out: AcrossIssue<D>[] = [];
    const add = (doc: D, path: FieldPath, message: string) => out.push({ doc, path, message });
    const holder = first.doc.value;
    for (const { doc, index } of list.slice(1)) {
      const value = doc.value;
      if (space === NAME) {
        add(
          doc,
          ['name'],
          `duplicate ${value.kind} name "${value.name}" (first defined at ${where(first.doc, ['name'])})`,
        );
      } else if (space === ID) {
        const id = (value as { id?: string }).id;
        add(doc, ['id'], `edge ID "${id}" is already adopted at ${where(first.doc, ['id'])}`);
      } else if (space === HOSTPORT) {
        // The same hostport twice in one edge is the edge's own rule's, not a conflict.
        if (doc === first.doc) continue;
        const hostport = (value as { hostports: readonly string[] }).hostports[index];
        add(
          doc,
          ['hostports', index],
          `hostport "${hostport}" is already served by ${holder.kind} "${holder.name}" (${where(first.doc, ['hostports', first.index])})`,
        );
      } else if (space === CLAIM) {
        const other = holder as EndpointValue;
        const self = value as EndpointValue;
        if (other.pooling_enabled && self.pooling_enabled) continue;
        const claim = claimOf(self);
        if (claim === undefined) continue;
        add(
          doc,
          ['url'],
          `CloudEndpoint "${other.name}" (${where(first.doc, ['url'])}) already uses ${claim.url} (${claim.binding}); both must set pooling_enabled: true to share it`,
        );
      } else if (space === NATURAL_KEY) {
        const kind = kindOfManifest(value.kind);
        const natural = kind?.ownership.by === 'key' ? kind.ownership.declared(value as never) : '';
        add(
          doc,
          ['name'],
          `${value.kind} "${value.name}" is ${natural}, as is "${holder.name}": one ${value.kind} per ${natural}`,
        );
      }
      // HELD and ABSENT groups have no findings of their own: references read them.
    }
    return out;
  }

  /** The findings about what `doc` itself refers to or claims. */
  #ownFindings(doc: D): AcrossIssue<D>[] {
    const out: AcrossIssue<D>[] = [];
    const add = (path: FieldPath, message: string) => out.push({ doc, path, message });
    const { value } = doc;
    if (value.kind === 'CloudEndpoint') this.#edgeClaimed(value, add);
    const references = kindOfManifest(value.kind)?.references;
    if (references !== undefined) this.#declaredReferences(references(value as never), add);
    this.#heldReferences(value, add);
    return out;
  }

  /** An endpoint cannot claim a host and port an edge of the set serves. */
  #edgeClaimed(value: EndpointValue, add: (path: FieldPath, message: string) => void): void {
    const claim = claimOf(value);
    if (claim === undefined) return;
    const edge = this.#groups.get(key(HOSTPORT, claim.hostport))?.[0];
    if (edge === undefined) return;
    add(
      ['url'],
      `${claim.url} claims ${claim.hostport}, which ${edge.doc.value.kind} "${edge.doc.value.name}" serves (${this.#options.where(edge.doc, ['hostports', edge.index])}); remove the hostport from the edge first`,
    );
  }

  /**
   * Every reference a document makes (`KindDefinition.references`: a `{ ref: NAME }`, an
   * endpoint's host on a reserved domain) names a resource declared in the set (one with `ensure:
   * absent` is going, so it does not count). A reference a live resource may satisfy (a domain
   * reserved by hand) is held to this only where the set declares resources of that kind at all:
   * then the set is where they are managed, and a name it lacks is a mistake; otherwise validate
   * cannot know, and the plan, which sees the account, says.
   */
  #declaredReferences(
    references: readonly Reference[],
    add: (path: FieldPath, message: string) => void,
  ): void {
    for (const ref of references) {
      // One held by another resource (a secret in its vault): `heldReferences`.
      if (ref.within !== undefined) continue;
      const target = KINDS.find((k) => k.kind === ref.kind);
      // A kind this version does not manage: the plan says what it finds.
      if (target === undefined) continue;
      const names = this.#declared.get(ref.kind);
      if (ref.liveSatisfies === true && names === undefined) continue;
      const found =
        ref.keys === undefined
          ? names?.has(ref.name) === true
          : ref.keys.some((k) => names?.has(`\0${k}`) === true);
      if (found) continue;
      const manifestKind = target.manifestKinds[0];
      add(
        ref.path,
        ref.keys === undefined
          ? `refers to ${manifestKind} "${ref.name}", which no manifest declares${didYouMean(
              ref.name,
              [...(names?.keys() ?? [])].filter((n) => !n.startsWith('\0')),
            )}`
          : `${ref.name} needs a ${manifestKind} for ${ref.keys.join(' or ')}, which no manifest declares; declare one (id: adopts one made by hand)`,
      );
    }
  }

  /**
   * Every reference by name a document makes to a resource held by another (a secret in its
   * vault) names a document of the kind referred to that is not `ensure: absent`; a reference
   * a live resource may satisfy without a manifest is left to the plan, which sees the account,
   * unless the directory declares the resource holding it (`within`: a vault declared here,
   * whose secret is not) or declares it in another holder or `ensure: absent`.
   */
  #heldReferences(value: DocumentValue, add: (path: FieldPath, message: string) => void): void {
    const { where } = this.#options;
    const manifestKind = (kind: string) =>
      KINDS.find((k) => k.kind === kind)?.manifestKinds[0] ?? kind;
    for (const ref of documentReferences(value)) {
      const within = ref.within;
      if (within === undefined) continue;
      const address = addressOf(ref.kind, ref.name);
      const what = `${manifestKind(ref.kind)} "${ref.name}"`;
      const target = this.#groups.get(key(HELD, address))?.[0]?.doc;
      if (target !== undefined) {
        if (
          !documentReferences(target.value).some(
            (r) => r.kind === within.kind && r.name === within.name,
          )
        ) {
          add(
            ref.path,
            `refers to ${what} in ${manifestKind(within.kind)} "${within.name}", but the ${what} declared at ${where(target, ['name'])} is in another one`,
          );
        }
        continue;
      }
      if (this.#groups.has(key(ABSENT, address))) {
        add(ref.path, `refers to ${what}, which its manifest deletes (ensure: absent)`);
        continue;
      }
      const holder = this.#groups.get(key(HELD, addressOf(within.kind, within.name)))?.[0]?.doc;
      if (holder !== undefined) {
        add(
          ref.path,
          `refers to ${what} in ${manifestKind(within.kind)} "${within.name}" (declared at ${where(holder, ['name'])}), which declares no such ${manifestKind(ref.kind)}`,
        );
        continue;
      }
      if (ref.liveSatisfies === true) continue;
      add(ref.path, `refers to ${what}, which no manifest declares`);
    }
  }
}

/** An endpoint's URL and binding (what pooling shares) and the host and port it takes. */
function claimOf(
  value: EndpointValue,
): { key: string; url: string; binding: string; hostport: string } | undefined {
  const url = parseEndpointUrl(value.url);
  if ('problem' in url) return undefined;
  const binding = value.bindings?.[0] ?? defaultBinding(url);
  return {
    key: `${url.url} ${binding}`,
    url: url.url,
    binding,
    hostport: `${url.host}:${url.port}`,
  };
}
