/**
 * A cloud endpoint's policy tests (`tests:`), as zod schemas: each case is a request, what the
 * outside world gives (the identity after a login, a JWT's claims, a rate limit reached, a
 * secret's value, ...) and the outcome expected of the policy. The cases stay in Git: they are
 * never sent to the API. What they mean is the evaluator's (src/policy-eval).
 */
import { z } from 'zod';
import { ACTION_TYPES, OAUTH_PROVIDERS } from '../../hosted/policy-actions.js';

/** The client address of a case that names none (TEST-NET-1, RFC 5737). */
export const DEFAULT_CLIENT_IP = '192.0.2.1';

const absoluteUrl = z.string().refine(
  (text) => {
    if (!URL.canParse(text)) return false;
    const scheme = new URL(text).protocol;
    return scheme === 'https:' || scheme === 'http:';
  },
  { error: 'must be an absolute http:// or https:// URL' },
);

const headerValues = z.union([z.string(), z.array(z.string())]);

export const PolicyRequestSchema = z
  .strictObject({
    method: z
      .string()
      .regex(/^[A-Za-z]+$/, { error: 'must be an HTTP method (GET, POST, ...)' })
      .default('GET')
      .meta({ description: 'The HTTP method (default GET).' }),
    url: absoluteUrl.meta({ description: 'The full URL requested (scheme, host, path, query).' }),
    client_ip: z
      .union([z.ipv4(), z.ipv6()], { error: 'must be an IPv4 or IPv6 address' })
      .default(DEFAULT_CLIENT_IP)
      .meta({ description: `The client's address (default ${DEFAULT_CLIENT_IP}).` }),
    headers: z
      .record(z.string(), headerValues)
      .optional()
      .meta({ description: 'Request headers: name -> value or list of values.' }),
    tls: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'TLS facts read as conn.tls.* (version, sni, client, ...).' }),
  })
  .meta({ description: 'The request of a policy test.' });

export const PolicyGivenSchema = z
  .strictObject({
    identity: z.record(z.string(), z.string()).optional().meta({
      description:
        'Logged in (oauth, openid-connect, saml pass) as this identity: email, name, id, ... Absent: not logged in.',
    }),
    jwt: z
      .strictObject({
        valid: z.boolean().default(true),
        claims: z.record(z.string(), z.unknown()).default({}),
      })
      .optional()
      .meta({ description: 'A JWT the request carries (jwt-validation): valid or not, claims.' }),
    rate_limited: z
      .union([z.boolean(), z.array(z.string())])
      .optional()
      .meta({
        description: 'true, or the names of the rate-limit actions whose limit is reached.',
      }),
    webhook_verified: z
      .boolean()
      .optional()
      .meta({ description: "The webhook's signature verifies (verify-webhook; default false)." }),
    circuit_open: z
      .boolean()
      .optional()
      .meta({ description: 'The circuit breaker is tripped (default false).' }),
    upstream_failed: z
      .array(z.string())
      .optional()
      .meta({ description: 'forward-internal URLs that fail (on_error: continue goes on).' }),
    ip_policies: z
      .record(z.string(), z.enum(['allow', 'deny']))
      .optional()
      .meta({
        description:
          "IP policies (ipp_ IDs) whose allow or deny rule the client's address matches.",
      }),
    secrets: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "Values of secrets.get('vault', 'name'), keyed vault/name." }),
    conn: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'More conn.* facts (geo, server_region, ...).' }),
    time: z.string().optional().meta({ description: 'time.now (RFC 3339).' }),
  })
  .meta({ description: 'What the outside world gives the case.' });

const AUTH_PROVIDERS = [...OAUTH_PROVIDERS, 'openid-connect', 'saml'] as const;

export const PolicyExpectSchema = z
  .strictObject({
    status: z.int().min(100).max(599).optional().meta({
      description: 'Answered with this status (deny, custom-response, a refusal, a redirect).',
    }),
    forward: z
      .string()
      .refine((t) => URL.canParse(t), {
        error: 'must be a URL (https://, http://, tls://, tcp://)',
      })
      .optional()
      .meta({ description: 'Forwarded (forward-internal) to this URL.' }),
    redirect: absoluteUrl.optional().meta({ description: 'Redirected to this URL.' }),
    auth: z
      .string()
      .optional()
      .meta({
        description: `Sent to this identity provider to log in (${AUTH_PROVIDERS.join(', ')}, or an openid-connect issuer URL).`,
      }),
    refused_by: z
      .string()
      .refine((t) => ACTION_TYPES.includes(t) || REFUSING_TYPES.includes(t), {
        error: 'not an action type',
      })
      .optional()
      .meta({ description: 'Refused by this action type (restrict-ips, deny, basic-auth, ...).' }),
    closed: z.boolean().optional().meta({ description: 'The connection is closed.' }),
    rule: z
      .string()
      .optional()
      .meta({ description: 'The name of the rule that decided the outcome.' }),
    headers_added: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: 'Headers added to the request sent upstream (name -> value).' }),
    headers_removed: z
      .array(z.string())
      .optional()
      .meta({ description: 'Headers removed from the request sent upstream.' }),
  })
  .refine((e) => Object.keys(e).length > 0, { error: 'expect needs at least one key' })
  .meta({ description: 'The outcome expected.' });

/**
 * Action types that may refuse a request, including the documented ones this version's action
 * table does not list yet (a case may name them before a policy can use them).
 */
export const REFUSING_TYPES: readonly string[] = [
  'restrict-ips',
  'deny',
  'verify-webhook',
  'jwt-validation',
  'basic-auth',
  'rate-limit',
  'circuit-breaker',
  'owasp-crs-request',
];

export const PolicyCaseSchema = z
  .strictObject({
    name: z.string().min(1).meta({ description: 'The case, as failures name it.' }),
    request: PolicyRequestSchema,
    given: PolicyGivenSchema.optional(),
    expect: PolicyExpectSchema,
  })
  .meta({
    id: 'PolicyTest',
    description:
      'A policy test: a request, what the outside world gives, the outcome expected. Run by validate, edgesync test, apply and the daemon; never sent to the API.',
  });

export const PolicyTestsSchema = z.array(PolicyCaseSchema).superRefine((cases, ctx) => {
  const seen = new Set<string>();
  cases.forEach((c, i) => {
    if (seen.has(c.name))
      ctx.addIssue({
        code: 'custom',
        path: [i, 'name'],
        message: `duplicate case name "${c.name}"`,
      });
    seen.add(c.name);
  });
});

export type PolicyCase = z.output<typeof PolicyCaseSchema>;
export type PolicyGiven = z.output<typeof PolicyGivenSchema>;
export type PolicyExpect = z.output<typeof PolicyExpectSchema>;
