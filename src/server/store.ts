/**
 * The server's state: per account, the TLS edges, HTTPS edges (with their routes), bot users,
 * cloud (and seeded agent) endpoints, IP policies and their rules, vaults and their secrets, and
 * the hostport index, all in memory. Every change goes through `commit(mutation)`, which applies
 * it synchronously (so the checks a handler made just before cannot be invalidated by another
 * request) and resolves once the change is durable (immediately without a journal). A change
 * the journal fails to make durable is undone (in reverse order, with every change applied
 * after it), so the state never holds a write that was not acknowledged; `settled()` lets a
 * reader wait until what it saw is durable. Loading a persisted state replays the same
 * mutations through `apply`.
 */
import type {
  BotUserRec,
  CertificateAuthorityRec,
  EndpointRec,
  HttpsEdgeRec,
  IpPolicyRec,
  IpRuleRec,
  Mutation,
  ReservedDomainRec,
  SecretRec,
  TlsEdgeRec,
  VaultRec,
} from './model.js';

/** Records of one kind, by ID and in ID (= creation) order. */
export class Collection<T extends { readonly id: string }> {
  readonly #byId = new Map<string, T>();
  /** Ascending IDs; IDs are minted increasing, so inserts are appends in practice. */
  #ids: string[] = [];

  get size(): number {
    return this.#ids.length;
  }

  get(id: string): T | undefined {
    return this.#byId.get(id);
  }

  put(rec: T): void {
    if (!this.#byId.has(rec.id)) {
      const ids = this.#ids;
      const last = ids[ids.length - 1];
      if (last === undefined || last < rec.id) ids.push(rec.id);
      else ids.splice(lowerBound(ids, rec.id), 0, rec.id);
    }
    this.#byId.set(rec.id, rec);
  }

  delete(id: string): T | undefined {
    const rec = this.#byId.get(id);
    if (rec === undefined) return undefined;
    this.#byId.delete(id);
    const i = lowerBound(this.#ids, id);
    if (this.#ids[i] === id) this.#ids.splice(i, 1);
    return rec;
  }

  /**
   * Newest first: up to `limit` records created before `beforeId` (any ID, even of a deleted
   * record, since IDs order by creation), and whether older records remain.
   */
  page(
    beforeId: string | undefined,
    limit: number,
    keep?: (rec: T) => boolean,
  ): { items: T[]; more: boolean } {
    const end = beforeId === undefined ? this.#ids.length : lowerBound(this.#ids, beforeId);
    if (keep !== undefined) return this.#pageWhere(end, limit, keep);
    const start = Math.max(0, end - limit);
    const items: T[] = [];
    for (let i = end - 1; i >= start; i--) {
      const rec = this.#byId.get(this.#ids[i] as string);
      if (rec !== undefined) items.push(rec);
    }
    return { items, more: start > 0 };
  }

  /** A page of the records `keep` accepts; `more` when an older accepted record remains. */
  #pageWhere(end: number, limit: number, keep: (rec: T) => boolean) {
    const items: T[] = [];
    for (let i = end - 1; i >= 0; i--) {
      const rec = this.#byId.get(this.#ids[i] as string);
      if (rec === undefined || !keep(rec)) continue;
      if (items.length === limit) return { items, more: true };
      items.push(rec);
    }
    return { items, more: false };
  }

  *values(): IterableIterator<T> {
    for (const id of this.#ids) {
      const rec = this.#byId.get(id);
      if (rec !== undefined) yield rec;
    }
  }
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class AccountState {
  readonly tls = new Collection<TlsEdgeRec>();
  readonly https = new Collection<HttpsEdgeRec>();
  readonly bots = new Collection<BotUserRec>();
  /** Cloud endpoints and the seeded agent endpoints, in one ID order (lists interleave them). */
  readonly endpoints = new Collection<EndpointRec>();
  // Account resources (account-resources.md).
  readonly domains = new Collection<ReservedDomainRec>();
  readonly cas = new Collection<CertificateAuthorityRec>();
  /** Lower-cased hostport -> ID of the edge (TLS or HTTPS) that serves it. */
  readonly hostports = new Map<string, string>();
  // IP policies and vaults: rules and secrets are listed account-wide, so each kind is one
  // collection of the account, their owner named by ID in each record.
  readonly ipPolicies = new Collection<IpPolicyRec>();
  readonly ipRules = new Collection<IpRuleRec>();
  readonly vaults = new Collection<VaultRec>();
  readonly secrets = new Collection<SecretRec>();

  /** The rules of one IP policy, in creation order. */
  rulesOf(policyId: string): IpRuleRec[] {
    return [...this.ipRules.values()].filter((r) => r.ip_policy_id === policyId);
  }

  /** The secrets of one vault, in creation order. */
  secretsOf(vaultId: string): SecretRec[] {
    return [...this.secrets.values()].filter((r) => r.vault_id === vaultId);
  }

  /** The edge already serving one of `hostports`, other than `selfId`. */
  hostportOwner(hostports: readonly string[], selfId: string | undefined): string | undefined {
    for (const hp of hostports) {
      const owner = this.hostports.get(hp.toLowerCase());
      if (owner !== undefined && owner !== selfId) return hp;
    }
    return undefined;
  }

  #indexHostports(before: readonly string[] | undefined, after: readonly string[], id: string) {
    for (const hp of before ?? []) {
      const key = hp.toLowerCase();
      if (this.hostports.get(key) === id) this.hostports.delete(key);
    }
    for (const hp of after) this.hostports.set(hp.toLowerCase(), id);
  }

  /**
   * Restores, when called, the record that `m` replaces (or removes the one it creates). Valid
   * while every mutation applied after `m` has been undone first.
   */
  undoFor(m: Mutation): () => void {
    switch (m.k) {
      case 'tls':
        return this.#restorer(this.tls, m.t === 'put' ? m.r.id : m.id, true);
      case 'https':
        return this.#restorer(this.https, m.t === 'put' ? m.r.id : m.id, true);
      case 'route':
        // A route lives inside its edge's record: restoring the edge restores its routes.
        return this.#restorer(this.https, m.t === 'put' ? m.r.edge_id : m.e, true);
      case 'bot':
        return this.#restorer(this.bots, m.t === 'put' ? m.r.id : m.id, false);
      case 'endpoint':
        return this.#restorer(this.endpoints, m.t === 'put' ? m.r.id : m.id, false);
      case 'domain':
        return this.#restorer(this.domains, m.t === 'put' ? m.r.id : m.id, false);
      case 'ca':
        return this.#restorer(this.cas, m.t === 'put' ? m.r.id : m.id, false);
      case 'ipp': {
        const id = m.t === 'put' ? m.r.id : m.id;
        const policy = this.#restorer(this.ipPolicies, id, false);
        // Deleting a policy deletes its rules: undoing it brings them back.
        const rules = this.rulesOf(id).map((r) => this.#restorer(this.ipRules, r.id, false));
        return () => {
          policy();
          for (const rule of rules) rule();
        };
      }
      case 'ipr':
        return this.#restorer(this.ipRules, m.t === 'put' ? m.r.id : m.id, false);
      case 'vault':
        return this.#restorer(this.vaults, m.t === 'put' ? m.r.id : m.id, false);
      case 'secret':
        return this.#restorer(this.secrets, m.t === 'put' ? m.r.id : m.id, false);
    }
  }

  #restorer<T extends { readonly id: string; readonly hostports?: readonly string[] }>(
    collection: Collection<T>,
    id: string,
    indexed: boolean,
  ): () => void {
    const before = collection.get(id);
    return () => {
      const current = collection.get(id);
      if (before === undefined) collection.delete(id);
      else collection.put(before);
      if (indexed) this.#indexHostports(current?.hostports, before?.hostports ?? [], id);
    };
  }

  apply(m: Mutation): void {
    switch (m.k) {
      case 'tls': {
        const before = this.tls.get(m.t === 'put' ? m.r.id : m.id);
        if (m.t === 'put') {
          this.tls.put(m.r);
          this.#indexHostports(before?.hostports, m.r.hostports, m.r.id);
        } else if (before !== undefined) {
          this.tls.delete(m.id);
          this.#indexHostports(before.hostports, [], m.id);
        }
        return;
      }
      case 'https': {
        const before = this.https.get(m.t === 'put' ? m.r.id : m.id);
        if (m.t === 'put') {
          // Routes have their own mutations; an edge put keeps the routes the edge has.
          const rec: HttpsEdgeRec = { ...m.r, routes: before?.routes ?? [] };
          this.https.put(rec);
          this.#indexHostports(before?.hostports, rec.hostports, rec.id);
        } else if (before !== undefined) {
          this.https.delete(m.id);
          this.#indexHostports(before.hostports, [], m.id);
        }
        return;
      }
      case 'route': {
        const edgeId = m.t === 'put' ? m.r.edge_id : m.e;
        const edge = this.https.get(edgeId);
        // A route of a deleted edge: the edge's delete already removed it.
        if (edge === undefined) return;
        const routes = edge.routes.filter((r) => r.id !== (m.t === 'put' ? m.r.id : m.id));
        if (m.t === 'put') {
          const i = routes.findIndex((r) => r.id > m.r.id);
          if (i < 0) routes.push(m.r);
          else routes.splice(i, 0, m.r);
        }
        this.https.put({ ...edge, routes });
        return;
      }
      case 'bot':
        if (m.t === 'put') this.bots.put(m.r);
        else this.bots.delete(m.id);
        return;
      case 'endpoint':
        if (m.t === 'put') this.endpoints.put(m.r);
        else this.endpoints.delete(m.id);
        return;
      case 'domain':
        if (m.t === 'put') this.domains.put(m.r);
        else this.domains.delete(m.id);
        return;
      case 'ca':
        if (m.t === 'put') this.cas.put(m.r);
        else this.cas.delete(m.id);
        return;
      case 'ipp':
        if (m.t === 'put') this.ipPolicies.put(m.r);
        else {
          this.ipPolicies.delete(m.id);
          for (const rule of this.rulesOf(m.id)) this.ipRules.delete(rule.id);
        }
        return;
      case 'ipr':
        if (m.t === 'put') this.ipRules.put(m.r);
        else this.ipRules.delete(m.id);
        return;
      case 'vault':
        if (m.t === 'put') this.vaults.put(m.r);
        else this.vaults.delete(m.id);
        return;
      case 'secret':
        if (m.t === 'put') this.secrets.put(m.r);
        else this.secrets.delete(m.id);
        return;
    }
  }
}

/** Makes a mutation durable; resolves once it is (the persistent journal, see journal.ts). */
export interface Journal {
  /**
   * `m` is already applied. If it cannot be made durable, the journal calls `undo` (and those of
   * every mutation applied after it, newest first) before the promise rejects.
   */
  append(m: Mutation, undo: () => void): Promise<void>;
  /** Resolves once every mutation applied so far is durable; undefined when they all are. */
  settled(): Promise<void> | undefined;
  close(): Promise<void>;
}

/** The whole state in a plain, JSON-serialisable form (snapshots of the journal). */
export interface StateSnapshot {
  readonly accounts: Record<
    string,
    | {
        tls: TlsEdgeRec[];
        https: HttpsEdgeRec[];
        bots: BotUserRec[];
        /** Cloud endpoints only; absent in snapshots written before endpoints existed. */
        endpoints?: EndpointRec[];
        /** Reserved domains and CAs; absent in snapshots written before they existed. */
        domains?: ReservedDomainRec[];
        cas?: CertificateAuthorityRec[];
        // IP policies and vaults; absent in snapshots written before they existed too.
        ip_policies?: IpPolicyRec[];
        ip_policy_rules?: IpRuleRec[];
        vaults?: VaultRec[];
        /** Values sealed, as the records hold them. */
        secrets?: SecretRec[];
      }
    | undefined
  >;
}

/**
 * A state as the mutations that rebuild it, one record each (an HTTPS edge without its routes,
 * then each route): what `load` applies, and what a snapshot file holds line by line, so a
 * state of any size is written and read a record at a time.
 */
export function* snapshotMutations(snapshot: StateSnapshot): Generator<Mutation> {
  for (const [a, state] of Object.entries(snapshot.accounts)) {
    if (state === undefined) continue;
    for (const r of state.tls) yield { t: 'put', k: 'tls', a, r };
    for (const r of state.bots) yield { t: 'put', k: 'bot', a, r };
    for (const r of state.domains ?? []) yield { t: 'put', k: 'domain', a, r };
    for (const r of state.cas ?? []) yield { t: 'put', k: 'ca', a, r };
    for (const r of state.endpoints ?? []) yield { t: 'put', k: 'endpoint', a, r };
    // Owners before what they own.
    for (const r of state.ip_policies ?? []) yield { t: 'put', k: 'ipp', a, r };
    for (const r of state.ip_policy_rules ?? []) yield { t: 'put', k: 'ipr', a, r };
    for (const r of state.vaults ?? []) yield { t: 'put', k: 'vault', a, r };
    for (const r of state.secrets ?? []) yield { t: 'put', k: 'secret', a, r };
    for (const edge of state.https) {
      yield { t: 'put', k: 'https', a, r: { ...edge, routes: [] } };
      for (const r of edge.routes) yield { t: 'put', k: 'route', a, r };
    }
  }
}

export class Store {
  readonly #accounts = new Map<string, AccountState>();
  #journal: Journal | undefined;

  /** The account's state, created empty on first use. */
  account(accountId: string): AccountState {
    let state = this.#accounts.get(accountId);
    if (state === undefined) {
      state = new AccountState();
      this.#accounts.set(accountId, state);
    }
    return state;
  }

  /** Every account's state, for the rules that span accounts (reserved domain names). */
  accounts(): IterableIterator<[string, AccountState]> {
    return this.#accounts.entries();
  }

  setJournal(journal: Journal): void {
    this.#journal = journal;
  }

  /** Applies `m` now; resolves when it is durable, rejects (with `m` undone) when it cannot be. */
  commit(m: Mutation): Promise<void> {
    if (this.#journal === undefined) {
      this.apply(m);
      return Promise.resolve();
    }
    const undo = this.account(m.a).undoFor(m);
    this.apply(m);
    return this.#journal.append(m, undo);
  }

  /**
   * Undefined when every applied mutation is durable; else a promise that resolves once they
   * are, or rejects if one of them was lost (and undone).
   */
  settled(): Promise<void> | undefined {
    return this.#journal?.settled();
  }

  apply(m: Mutation): void {
    this.account(m.a).apply(m);
  }

  snapshot(): StateSnapshot {
    const accounts: StateSnapshot['accounts'] = {};
    for (const [id, state] of this.#accounts) {
      accounts[id] = {
        tls: [...state.tls.values()],
        https: [...state.https.values()],
        bots: [...state.bots.values()],
        // Agent endpoints are re-seeded at every start, never persisted.
        endpoints: [...state.endpoints.values()].filter((e) => e.type === 'cloud'),
        domains: [...state.domains.values()],
        cas: [...state.cas.values()],
        ip_policies: [...state.ipPolicies.values()],
        ip_policy_rules: [...state.ipRules.values()],
        vaults: [...state.vaults.values()],
        secrets: [...state.secrets.values()],
      };
    }
    return { accounts };
  }

  load(snapshot: StateSnapshot): void {
    for (const m of snapshotMutations(snapshot)) this.apply(m);
  }

  /** Every record ID, for seeding the ID generator after a load. */
  *ids(): IterableIterator<string> {
    for (const state of this.#accounts.values()) {
      for (const r of state.tls.values()) yield r.id;
      for (const r of state.bots.values()) yield r.id;
      for (const r of state.endpoints.values()) yield r.id;
      const accountResources = [
        state.domains,
        state.cas,
        state.ipPolicies,
        state.ipRules,
        state.vaults,
        state.secrets,
      ];
      for (const c of accountResources) {
        for (const r of c.values()) yield r.id;
      }
      for (const e of state.https.values()) {
        yield e.id;
        for (const r of e.routes) yield r.id;
      }
    }
  }
}
