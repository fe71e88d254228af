/**
 * The reserved domain operations (account-resources.md section 1): create, get, list (with a
 * `filter` over the kind's filterable fields), partial update, delete, and the deletes of a
 * domain's certificate and certificate management policy. A write checks the host-name rules
 * (domain-names.ts), the account's plan (wildcards 419, limits 415/418), ownership across
 * accounts (413, 414, 417) and what still uses a domain (446), then commits one record.
 *
 * Readiness: a custom domain under a certificate management policy gets its certificate once
 * its CNAME record exists. The server learns that from the `dns` knob (tests mark a domain's
 * CNAME created, or its DNS wrong); every domain request first brings the account's pending
 * domains up to date with it (`settle`), committing what changed, so the answer and what is
 * persisted agree.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  checkNotEmpty,
  describedFields,
  describedJson,
  describedWrite,
  JsonCache,
  lookup,
} from './account-common.js';
import {
  CERTIFICATE_AUTHORITIES,
  CERTIFICATE_ID_PREFIX,
  CNAME_TARGET_DOMAIN,
  DOMAIN_ERROR_CODE as CODE,
  DOMAIN_ID_PREFIX,
  DOMAIN_REGION,
  DOMAINS_PATH,
  FILTERABLE_FIELDS,
  ACCOUNT_RESOURCE_LIMITS as LIMITS,
  PRIVATE_KEY_TYPES,
  RESOLVES_TO,
} from './domain-codes.js';
import {
  domainFor,
  domainNameViolation,
  isServiceDomain,
  isServiceSubdomain,
  isWildcard,
  overlaps,
} from './domain-names.js';
import { invalidValue, RequestError } from './errors.js';
import {
  type Call,
  checkBodyId,
  type HandlerDeps,
  json,
  noContent,
  type Reply,
} from './handler-common.js';
import type { ServerKnobs } from './knobs.js';
import { filteredList } from './list-filter.js';
import { type CertificateStatus, type ReservedDomainRec, rfc3339Seconds } from './model.js';
import { obj, prefixedId } from './schema-blocks.js';
import type { AccountState } from './store.js';
import { parseBody } from './validate.js';

// ---- write shapes

const policySchema = obj({
  authority: z.enum(CERTIFICATE_AUTHORITIES).optional(),
  private_key_type: z.enum(PRIVATE_KEY_TYPES).optional(),
});

const domainFields = {
  ...describedFields,
  certificate_id: prefixedId(CERTIFICATE_ID_PREFIX, 'certificate_id').optional(),
  certificate_management_policy: policySchema.nullable().optional(),
  resolves_to: z
    .array(obj({ value: z.enum(RESOLVES_TO) }))
    .max(RESOLVES_TO.length)
    .optional(),
  /** Deprecated: ignored on create, 451 when an update would change it. */
  region: z.string().optional(),
};

const domainCreateSchema = obj({ domain: z.string(), ...domainFields });
// `domain` is not accepted: a new name is a delete and a create.
const domainUpdateSchema = obj({
  id: prefixedId(DOMAIN_ID_PREFIX, 'id').optional(),
  ...domainFields,
});

type Policy = ReservedDomainRec['certificate_management_policy'];

// ---- read shape

function domainUri(base: string, id: string): string {
  return `${base}${DOMAINS_PATH}/${id}`;
}

class DomainRenderer {
  readonly #base: string;
  readonly #cache = new JsonCache();

  constructor(base: string) {
    this.#base = base;
  }

  domain(rec: ReservedDomainRec): string {
    return this.#cache.of(rec, () => ({
      id: rec.id,
      uri: domainUri(this.#base, rec.id),
      created_at: rec.created_at,
      domain: rec.domain,
      region: DOMAIN_REGION,
      ...describedJson(rec),
      cname_target: rec.cname_target,
      acme_challenge_cname_target: rec.acme_challenge_cname_target,
      certificate:
        rec.certificate === null
          ? null
          : {
              id: rec.certificate.id,
              uri: `${this.#base}/tls_certificates/${rec.certificate.id}`,
            },
      certificate_management_policy: rec.certificate_management_policy,
      certificate_management_status: rec.certificate_management_status,
      resolves_to: rec.resolves_to,
    }));
  }
}

// ---- readiness

/** A DNS error's next retry, after it was seen. */
const DNS_RETRY_MS = 15 * 60 * 1000;

/**
 * The record as the `dns` knob makes it: a pending managed certificate is issued once the
 * CNAME exists, shows a `DNS_ERROR` job while the DNS is wrong, else waits for the record. The
 * same record (by identity) when nothing changes.
 */
function settled(
  rec: ReservedDomainRec,
  knobs: ServerKnobs,
  at: number,
  mintCertificate: () => string,
): ReservedDomainRec {
  if (rec.certificate_management_policy === null || rec.certificate !== null) return rec;
  const created = knobs.dns?.cnamesCreated;
  const error = knobs.dns?.dnsErrors?.[rec.domain];
  const started =
    rec.certificate_management_status?.provisioning_job?.started_at ?? rfc3339Seconds(at);
  if (error === undefined && (created === 'all' || created?.includes(rec.domain) === true)) {
    return {
      ...rec,
      certificate: { id: mintCertificate() },
      certificate_uploaded: false,
      certificate_management_status: null,
    };
  }
  const record = isWildcard(rec.domain)
    ? `_acme-challenge.${rec.domain.slice(2)} CNAME ${rec.acme_challenge_cname_target}`
    : `${rec.domain} CNAME ${rec.cname_target}`;
  const status: CertificateStatus =
    error === undefined
      ? {
          renews_at: null,
          provisioning_job: {
            error_code: null,
            msg: `waiting for the DNS record ${record}`,
            started_at: started,
            retries_at: null,
          },
        }
      : {
          renews_at: null,
          provisioning_job: {
            error_code: 'DNS_ERROR',
            msg: error,
            started_at: started,
            retries_at: rfc3339Seconds(Date.parse(started) + DNS_RETRY_MS),
          },
        };
  if (JSON.stringify(status) === JSON.stringify(rec.certificate_management_status)) return rec;
  return { ...rec, certificate_management_status: status };
}

// ---- the rules a create checks across the account and the other accounts

function checkName(name: string, knobs: ServerKnobs): void {
  const broken = domainNameViolation(name);
  if (broken !== undefined) throw new RequestError(400, broken.code, `domain: ${broken.message}`);
  if (isServiceDomain(name)) {
    throw new RequestError(
      400,
      CODE.otherAccount,
      `domain: ${name} belongs to the service; reserve a name below it`,
    );
  }
  if (isWildcard(name) && knobs.domainPlan?.wildcards === false) {
    throw new RequestError(
      400,
      CODE.wildcardNeedsPlan,
      `domain: ${name}: wildcard domains need a paid plan`,
    );
  }
}

function checkOwnership(deps: HandlerDeps, call: Call, name: string): void {
  for (const d of call.account.domains.values()) {
    if (d.domain === name) {
      throw new RequestError(
        400,
        CODE.alreadyReserved,
        `domain: ${name} is already reserved by this account (${d.id})`,
      );
    }
  }
  for (const [accountId, state] of deps.store.accounts()) {
    if (accountId === call.accountId) continue;
    for (const d of state.domains.values()) {
      if (!overlaps(name, d.domain)) continue;
      const wildcard = isWildcard(name);
      throw new RequestError(
        400,
        wildcard ? CODE.wildcardOverlapsOtherAccount : CODE.otherAccount,
        wildcard
          ? `domain: the wildcard ${name} overlaps a domain another account has reserved`
          : `domain: ${name} is reserved by another account`,
      );
    }
  }
}

function checkLimits(account: AccountState, name: string, knobs: ServerKnobs): void {
  const max = knobs.domainPlan?.maxDomains ?? LIMITS.domainsPerAccount;
  if (account.domains.size >= max) {
    throw new RequestError(
      400,
      CODE.tooManyDomains,
      `this account has reached its limit of ${max} reserved domains`,
    );
  }
  if (!isWildcard(name)) return;
  const maxWildcards = knobs.domainPlan?.maxWildcardDomains ?? LIMITS.wildcardDomainsPerAccount;
  let wildcards = 0;
  for (const d of account.domains.values()) if (isWildcard(d.domain)) wildcards++;
  if (wildcards >= maxWildcards) {
    throw new RequestError(
      400,
      CODE.tooManyWildcards,
      `this account has reached its limit of ${maxWildcards} wildcard domains`,
    );
  }
}

function checkPolicy(
  name: string,
  certificateId: string | undefined,
  policy: object | null | undefined,
): void {
  if (policy != null && isServiceSubdomain(name)) {
    throw new RequestError(
      400,
      CODE.policyOnServiceDomain,
      `certificate_management_policy: must be null for ${name}, a subdomain of the service's own domains (its certificate is the service's)`,
    );
  }
  if (policy != null && certificateId !== undefined) {
    throw invalidValue(
      'certificate_id and certificate_management_policy exclude each other: send one',
    );
  }
}

/** What still uses a domain: an endpoint that matched it, or an edge hostport on it. */
function userOf(account: AccountState, rec: ReservedDomainRec): string | undefined {
  for (const ep of account.endpoints.values())
    if (ep.domain_id === rec.id) return `endpoint ${ep.id}`;
  for (const [hostport, edgeId] of account.hostports) {
    const host = hostport.slice(0, hostport.lastIndexOf(':'));
    if (domainFor(host, [rec]) !== undefined) return `edge ${edgeId} (hostport ${hostport})`;
  }
  return undefined;
}

function normalPolicy(policy: {
  authority?: 'letsencrypt' | undefined;
  private_key_type?: 'ecdsa' | 'rsa' | undefined;
}): NonNullable<Policy> {
  return {
    authority: policy.authority ?? 'letsencrypt',
    private_key_type: policy.private_key_type ?? 'ecdsa',
  };
}

// ---- the operations

export function domainHandlers(deps: HandlerDeps) {
  const { store, render, ids, now, knobs } = deps;
  const view = new DomainRenderer(render.base);
  const one = (rec: ReservedDomainRec) => view.domain(rec);
  const mint = () => ids.next(CERTIFICATE_ID_PREFIX);
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');

  /** Commits `rec` (settled against the knobs); resolves when durable. */
  const put = (call: Call, rec: ReservedDomainRec) => {
    const next = settled(rec, knobs, now(), mint);
    return {
      rec: next,
      durable: store.commit({ t: 'put', k: 'domain', a: call.accountId, r: next }),
    };
  };

  /** Brings the account's pending domains up to date with the `dns` knob. */
  const settle = (call: Call): Promise<void> | undefined => {
    let durable: Promise<void> | undefined;
    for (const rec of call.account.domains.values()) {
      const next = settled(rec, knobs, now(), mint);
      if (next !== rec)
        durable = store.commit({ t: 'put', k: 'domain', a: call.accountId, r: next });
    }
    return durable;
  };

  const domainOf = (call: Call) =>
    lookup(call, 'reserved domain', (id) => call.account.domains.get(id));

  return {
    createReservedDomain(call: Call): Reply {
      settle(call);
      const b = parseBody(domainCreateSchema, call.body);
      const name = b.domain.toLowerCase();
      checkName(name, knobs);
      checkOwnership(deps, call, name);
      checkLimits(call.account, name, knobs);
      checkPolicy(name, b.certificate_id, b.certificate_management_policy);
      const service = isServiceSubdomain(name);
      const custom = !service;
      const uploaded = b.certificate_id !== undefined;
      const policy: Policy =
        custom && !uploaded && b.certificate_management_policy !== null
          ? normalPolicy(b.certificate_management_policy ?? {})
          : null;
      const rec: ReservedDomainRec = {
        id: ids.next(DOMAIN_ID_PREFIX),
        created_at: rfc3339Seconds(now()),
        domain: name,
        ...describedWrite(b),
        cname_target: custom
          ? `${hex(8)}.${call.accountId.slice(0, 10)}.${CNAME_TARGET_DOMAIN}`
          : null,
        acme_challenge_cname_target:
          custom && isWildcard(name) ? `${hex(8)}.acme.${CNAME_TARGET_DOMAIN}` : null,
        certificate: uploaded ? { id: b.certificate_id as string } : null,
        certificate_uploaded: uploaded,
        certificate_management_policy: policy,
        certificate_management_status: null,
        resolves_to: b.resolves_to ?? [{ value: DOMAIN_REGION }],
      };
      const done = put(call, rec);
      return json(201, one(done.rec), done.durable);
    },

    getReservedDomain(call: Call): Reply {
      const durable = settle(call);
      return json(200, one(domainOf(call)), durable);
    },

    async listReservedDomains(call: Call): Promise<Reply> {
      const durable = settle(call);
      const reply = await filteredList(render, call, {
        collection: call.account.domains,
        key: 'reserved_domains',
        path: '/reserved_domains',
        one,
        fields: FILTERABLE_FIELDS.reservedDomains,
      });
      return durable === undefined ? reply : { ...reply, durable };
    },

    updateReservedDomain(call: Call): Reply {
      settle(call);
      const rec = domainOf(call);
      const b = parseBody(domainUpdateSchema, call.body);
      checkNotEmpty(b);
      checkBodyId(b.id, rec.id, 'id');
      if (b.region !== undefined && b.region !== DOMAIN_REGION) {
        throw new RequestError(
          400,
          CODE.regionChange,
          `region: domains are served globally; region cannot change to ${JSON.stringify(b.region)}`,
        );
      }
      checkPolicy(rec.domain, b.certificate_id, b.certificate_management_policy);
      let next: ReservedDomainRec = {
        ...rec,
        ...describedWrite(b, rec),
        resolves_to: b.resolves_to ?? rec.resolves_to,
      };
      if (b.certificate_id !== undefined) {
        next = {
          ...next,
          certificate: { id: b.certificate_id },
          certificate_uploaded: true,
          certificate_management_policy: null,
          certificate_management_status: null,
        };
      } else if (b.certificate_management_policy === null) {
        next = {
          ...next,
          certificate_management_policy: null,
          certificate_management_status: null,
        };
      } else if (b.certificate_management_policy !== undefined) {
        const policy = normalPolicy(b.certificate_management_policy);
        const same = JSON.stringify(policy) === JSON.stringify(rec.certificate_management_policy);
        // A new policy (or one replacing an uploaded certificate) issues a new certificate.
        next =
          same && !rec.certificate_uploaded
            ? next
            : {
                ...next,
                certificate: null,
                certificate_uploaded: false,
                certificate_management_policy: policy,
              };
      }
      const done = put(call, next);
      return json(200, one(done.rec), done.durable);
    },

    deleteReservedDomain(call: Call): Reply {
      settle(call);
      const rec = domainOf(call);
      const user = userOf(call.account, rec);
      if (user !== undefined) {
        throw new RequestError(
          400,
          CODE.stillReferenced,
          `reserved domain ${rec.domain} is still referenced by ${user}; delete or move it first`,
        );
      }
      return noContent(store.commit({ t: 'del', k: 'domain', a: call.accountId, id: rec.id }));
    },

    deleteReservedDomainCertificate(call: Call): Reply {
      settle(call);
      const rec = domainOf(call);
      if (rec.certificate === null) return noContent();
      const next = { ...rec, certificate: null, certificate_uploaded: false };
      return noContent(put(call, next).durable);
    },

    deleteReservedDomainCertificateManagementPolicy(call: Call): Reply {
      settle(call);
      const rec = domainOf(call);
      if (rec.certificate_management_policy === null) return noContent();
      const next = {
        ...rec,
        certificate_management_policy: null,
        certificate_management_status: null,
      };
      return noContent(put(call, next).durable);
    },
  };
}
