/**
 * Reserved domains (`ReservedDomain`, `/reserved_domains`): the host names of the account that
 * public cloud endpoints may serve. What the controller knows of them, as one definition: the
 * manifest document, the fields the generic planner writes (the host name cannot change in
 * place: a new one is a delete and a create), ownership by the host name (unique per account),
 * readiness (a domain whose certificate is not issued serves browsers a certificate they reject:
 * which CNAME records it waits for, or the service's DNS error), and which reserved domains may
 * serve an endpoint's host (exactly, or under a wildcard).
 *
 * Domains are never pruned: a deleted domain goes back to the pool where anyone may reserve it,
 * so only `ensure: absent` deletes one.
 */
import { z } from 'zod';
import type { EndpointBinding, EndpointScheme } from '../hosted/cloud-endpoints.js';
import { describedText, idPattern, labels, NAME_PATTERN } from '../manifest/modules.js';
import type { Declared, KindDefinition, LiveRecord, Readiness } from './definition.js';

/** The prefix of a reserved domain's ID. */
const DOMAIN_ID_PREFIX = 'rd_';

/** Schemes whose public endpoints need a reserved domain for their host (319 / 318 without). */
const DOMAIN_SCHEMES: ReadonlySet<EndpointScheme> = new Set<EndpointScheme>([
  'http',
  'https',
  'tls',
]);

/**
 * Top-level names that never resolve publicly (RFC 6761, 6762, 7686, 8375, 9476, and the
 * `.internal` of private networks): the service refuses to reserve a name under one.
 */
const PRIVATE_TLDS: ReadonlySet<string> = new Set([
  'test',
  'example',
  'invalid',
  'localhost',
  'local',
  'onion',
  'alt',
  'internal',
  'arpa',
]);

/** Why a host name matching `DOMAIN_PATTERN` cannot be reserved, if it cannot. */
export function domainProblem(name: string): string | undefined {
  const labels = name.split('.');
  const tld = labels.at(-1) as string;
  if (PRIVATE_TLDS.has(tld) || !/^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(tld)) {
    return `the TLD "${tld}" does not resolve publicly`;
  }
  const dashed = labels.find((l) => l.slice(2, 4) === '--' && !l.startsWith('xn--'));
  if (dashed !== undefined)
    return `"--" at the third and fourth characters of a label only as "xn--" (${dashed})`;
  return undefined;
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/** A fully qualified lower-case host name, `*` only as the whole first label. */
const DOMAIN_PATTERN = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})+$`);

export const ReservedDomainSchema = z
  .strictObject({
    kind: z.literal('ReservedDomain'),
    name: z.string().regex(NAME_PATTERN, {
      error:
        'names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
    }),
    domain: z
      .string()
      .max(253, { error: 'a host name is at most 253 characters' })
      .regex(DOMAIN_PATTERN, {
        error:
          'must be a fully qualified lower-case host name (app.example.com), "*" only as the whole first label (*.example.com)',
      })
      .superRefine((name, ctx) => {
        const problem = DOMAIN_PATTERN.test(name) ? domainProblem(name) : undefined;
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({
        description:
          'The host name reserved (app.example.com, or a wildcard *.example.com); it cannot change in place: a new one deletes the old reservation and reserves the new one.',
      }),
    description: describedText().optional(),
    metadata: labels(),
    certificate_management_policy: z
      .strictObject({
        authority: z.literal('letsencrypt').default('letsencrypt'),
        private_key_type: z.enum(['ecdsa', 'rsa']).default('ecdsa'),
      })
      .optional()
      .meta({
        description:
          "How the service obtains the domain's certificate (custom domains only: a subdomain of the service's own domains takes none). Unset: left as the service has it.",
      }),
    resolves_to: z.array(z.string().min(1)).min(1).optional().meta({
      description:
        'Points of presence the domain resolves to (`global`, or point-of-presence codes). Unset: left as the service has it.',
    }),
    id: z
      .string()
      .regex(idPattern(DOMAIN_ID_PREFIX), {
        error: `must be a reserved domain ID (${DOMAIN_ID_PREFIX}...)`,
      })
      .optional()
      .meta({ description: 'Adopt this existing reservation rather than reserve the domain.' }),
    ensure: z.enum(['present', 'absent']).default('present').meta({
      description:
        'absent: delete the reservation (the only way edgesync deletes a domain: domains are never pruned).',
    }),
    suspend: z.boolean().optional().meta({
      description:
        'true: edgesync leaves this resource exactly as it is live (no create, update or delete) until it is false again.',
    }),
  })
  .meta({
    description:
      'A reserved domain, keyed by its host name. Never deleted unless ensure: absent says so; id adopts an existing reservation.',
  });

type DomainManifest = Declared & z.output<typeof ReservedDomainSchema>;

/** A reserved domain as listed (the fields read here; the client validated the rest). */
interface DomainRecord extends LiveRecord {
  readonly domain?: string;
  readonly cname_target?: string | null;
  readonly acme_challenge_cname_target?: string | null;
  readonly certificate?: { readonly id: string } | null;
  readonly certificate_management_policy?: {
    readonly authority: string;
    readonly private_key_type: string;
  } | null;
  readonly certificate_management_status?: {
    readonly provisioning_job?: {
      readonly error_code?: string | null;
      readonly msg?: string | null;
    } | null;
  } | null;
  readonly resolves_to?: readonly { readonly value: string }[] | null;
  readonly description?: string;
}

export function isWildcardDomain(name: string): boolean {
  return name.startsWith('*.');
}

/**
 * The reserved domain names that may serve `host`, the service's choice first: the same name,
 * then the wildcards it is below, nearest first (`a.b.example.com`: itself, `*.b.example.com`,
 * `*.example.com`, `*.com`). A wildcard host is served only by the same wildcard.
 */
export function coveringDomains(host: string): string[] {
  const out = [host];
  if (isWildcardDomain(host)) return out;
  const labels = host.split('.');
  for (let i = 1; i < labels.length; i++) out.push(`*.${labels.slice(i).join('.')}`);
  return out;
}

/**
 * Whether an endpoint of this scheme and binding needs a reserved domain for its host: public
 * http, https and tls endpoints do.
 */
export function needsReservedDomain(scheme: EndpointScheme, binding: EndpointBinding): boolean {
  return binding === 'public' && DOMAIN_SCHEMES.has(scheme);
}

/** The DNS records a custom domain waits for: its CNAME, and the ACME challenge's for a wildcard. */
function recordsOf(l: DomainRecord): NonNullable<Readiness['records']> {
  const domain = String(l.domain);
  const out: { name: string; type: 'CNAME'; target: string }[] = [];
  if (typeof l.cname_target === 'string') {
    out.push({ name: domain, type: 'CNAME', target: l.cname_target });
  }
  if (isWildcardDomain(domain) && typeof l.acme_challenge_cname_target === 'string') {
    out.push({
      name: `_acme-challenge.${domain.slice(2)}`,
      type: 'CNAME',
      target: l.acme_challenge_cname_target,
    });
  }
  return out;
}

/**
 * How ready a reservation is to serve browsers: ready when it needs no certificate of its own (a
 * subdomain of the service's own domains: no CNAME target) or its certificate is issued; an
 * error when the service reports a DNS error (with its message); else pending, with the CNAME
 * records the certificate waits for.
 */
export function domainReadiness(l: DomainRecord): Readiness {
  if (l.certificate !== null && l.certificate !== undefined) {
    return { state: 'ready', message: `certificate ${l.certificate.id} issued` };
  }
  if (l.cname_target === null || l.cname_target === undefined) {
    return {
      state: 'ready',
      message: "a subdomain of the service's own domains: served under the service's certificate",
    };
  }
  const records = recordsOf(l);
  const dns = records.map((r) => `${r.name} CNAME ${r.target}`).join(' and ');
  const job = l.certificate_management_status?.provisioning_job;
  if (job?.error_code === 'DNS_ERROR') {
    return {
      state: 'error',
      message: `DNS error: ${job.msg ?? 'the service reports no message'} (needs ${dns})`,
      records,
    };
  }
  if (l.certificate_management_policy === null || l.certificate_management_policy === undefined) {
    return {
      state: 'pending',
      message:
        'no certificate: neither an uploaded one nor a certificate management policy (set certificate_management_policy)',
      records,
    };
  }
  const provisioning =
    job?.error_code === 'INTERNAL_ERROR'
      ? `certificate provisioning failed for now (${job.msg ?? 'no message'}): the service retries`
      : 'certificate provisioning';
  return { state: 'pending', message: `needs DNS: ${dns}; then ${provisioning}`, records };
}

export const RESERVED_DOMAIN: KindDefinition<DomainManifest, DomainRecord> = {
  kind: 'reserved_domain',
  plural: 'reserved_domains',
  manifestKinds: ['ReservedDomain'],
  description:
    'A reserved domain, keyed by its host name. Never deleted unless ensure: absent says so; id adopts an existing reservation.',
  schema: ReservedDomainSchema,
  api: {
    list: 'listReservedDomains',
    create: 'createReservedDomain',
    update: 'updateReservedDomain',
    delete: 'deleteReservedDomain',
  },
  // The host name is unique per account: a reservation made by hand is matched by it (and
  // taken over with the owner mark the generic planner writes; the mark tells which
  // reservations a removed manifest leaves behind).
  ownership: {
    by: 'key',
    key: (l) => String(l.domain),
    declared: (d) => String(d.domain),
  },
  fields: [
    {
      name: 'domain',
      desired: (d) => d.domain,
      live: (l) => l.domain,
      replace: true,
      createOnly: true,
    },
    { name: 'description', desired: (d) => d.description, live: (l) => l.description },
    {
      name: 'certificate_management_policy',
      desired: (d) => d.certificate_management_policy,
      live: (l) =>
        l.certificate_management_policy === null || l.certificate_management_policy === undefined
          ? undefined
          : {
              authority: l.certificate_management_policy.authority,
              private_key_type: l.certificate_management_policy.private_key_type,
            },
    },
    {
      name: 'resolves_to',
      desired: (d) => d.resolves_to?.map((value) => ({ value })),
      live: (l) => l.resolves_to?.map((r) => ({ value: r.value })),
    },
  ],
  readiness: domainReadiness,
  prune: false,
  order: 20,
};
