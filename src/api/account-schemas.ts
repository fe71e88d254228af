/**
 * The wire shapes of the account resources (account-resources.md sections 1 to 5): reserved
 * domains, IP policies and their rules, vaults and their secrets, certificate authorities and
 * service users. Read shapes are validated at the client edge, tolerant of fields the service
 * adds (unknown fields dropped as for every record, an unset description or metadata absent);
 * write shapes are strict, like the service, and type the client's request bodies. A secret's
 * value is only ever written: no read shape has it. Every type here is inferred from its schema.
 */
import { z } from 'zod';

const page = { uri: z.string(), next_page_uri: z.string().nullable() };
const ref = z.object({ id: z.string() });
const described = { description: z.string().optional(), metadata: z.string().optional() };

// ---- reserved domains

const certificateManagementPolicy = z.object({
  authority: z.string(),
  private_key_type: z.string(),
});

export const reservedDomainSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  domain: z.string(),
  ...described,
  cname_target: z.string().nullable(),
  acme_challenge_cname_target: z.string().nullish(),
  certificate: ref.nullable(),
  certificate_management_policy: certificateManagementPolicy.nullable(),
  certificate_management_status: z
    .object({
      renews_at: z.string().nullish(),
      provisioning_job: z
        .object({
          // DNS_ERROR or INTERNAL_ERROR; read as a plain string (the service may add more).
          error_code: z.string().nullish(),
          msg: z.string().nullish(),
          started_at: z.string().nullish(),
          retries_at: z.string().nullish(),
        })
        .nullish(),
    })
    .nullable(),
  resolves_to: z.array(z.object({ value: z.string() })).nullish(),
});
export const reservedDomainListSchema = z.object({
  reserved_domains: z.array(reservedDomainSchema),
  ...page,
});

const domainWrite = {
  ...described,
  certificate_id: z.string().optional(),
  certificate_management_policy: z
    .strictObject({
      authority: z.literal('letsencrypt').optional(),
      private_key_type: z.enum(['ecdsa', 'rsa']).optional(),
    })
    .nullable()
    .optional(),
  resolves_to: z.array(z.strictObject({ value: z.string() })).optional(),
};
/** `POST /reserved_domains`: the name, and how its certificate is had. */
export const reservedDomainCreateSchema = z.strictObject({ domain: z.string(), ...domainWrite });
/** `PATCH /reserved_domains/{id}`: partial; the name cannot change (a delete and a create). */
export const reservedDomainUpdateSchema = z.strictObject(domainWrite);

// ---- certificate authorities

export const certificateAuthoritySchema = z.object({
  id: z.string(),
  created_at: z.string(),
  ...described,
  ca_pem: z.string(),
  subject_common_name: z.string(),
  not_before: z.string(),
  not_after: z.string(),
  key_usages: z.array(z.string()),
  extended_key_usages: z.array(z.string()),
});
export const certificateAuthorityListSchema = z.object({
  certificate_authorities: z.array(certificateAuthoritySchema),
  ...page,
});
export const certificateAuthorityCreateSchema = z.strictObject({
  ca_pem: z.string(),
  ...described,
});
/** `PATCH /certificate_authorities/{id}`: the PEM cannot change (a delete and a create). */
export const certificateAuthorityUpdateSchema = certificateAuthorityCreateSchema.omit({
  ca_pem: true,
});

// ---- service users (the bot users' records under their successor name)

export const serviceUserSchema = z.object({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  created_at: z.string(),
});
export const serviceUserListSchema = z.object({
  service_users: z.array(serviceUserSchema),
  ...page,
});
export const serviceUserCreateSchema = z.strictObject({
  name: z.string(),
  active: z.boolean().optional(),
});
export const serviceUserUpdateSchema = serviceUserCreateSchema.partial();

// ---- IP policies, rules, vaults and secrets: read shapes

export const ipPolicySchema = z.object({ id: z.string(), created_at: z.string(), ...described });

export const ipPolicyRuleSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  ...described,
  cidr: z.string(),
  ip_policy: ref,
  /** `allow` or `deny`, read as a plain string (the service may add more). */
  action: z.string(),
});

export const vaultSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  name: z.string(),
  ...described,
  created_by: z.string().optional(),
  last_updated_by: z.string().optional(),
});

export const secretSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  /** Moves on every change: how a change made outside Git shows. */
  updated_at: z.string(),
  name: z.string(),
  ...described,
  created_by: ref.optional(),
  last_updated_by: ref.optional(),
  vault: ref,
  vault_name: z.string(),
});

export const ipPolicyListSchema = z.object({ ip_policies: z.array(ipPolicySchema), ...page });
export const ipPolicyRuleListSchema = z.object({
  ip_policy_rules: z.array(ipPolicyRuleSchema),
  ...page,
});
export const vaultListSchema = z.object({ vaults: z.array(vaultSchema), ...page });
/** `GET /vault_secrets` and `GET /vaults/{id}/secrets` share it. */
export const secretListSchema = z.object({ secrets: z.array(secretSchema), ...page });

export type IpPolicy = z.infer<typeof ipPolicySchema>;
export type IpPolicyRule = z.infer<typeof ipPolicyRuleSchema>;
export type Vault = z.infer<typeof vaultSchema>;
export type Secret = z.infer<typeof secretSchema>;

// ---- IP policies, rules, vaults and secrets: write shapes

/** `POST /ip_policies` and `PATCH /ip_policies/{id}`. */
export const ipPolicyWriteSchema = z.strictObject(described);

/** `POST /ip_policy_rules`: `cidr`, `ip_policy_id` and `action` required. */
export const ipPolicyRuleCreateSchema = z.strictObject({
  cidr: z.string(),
  ip_policy_id: z.string(),
  action: z.enum(['allow', 'deny']),
  ...described,
});

/** `PATCH /ip_policy_rules/{id}`: a rule's action and policy never change in place. */
export const ipPolicyRuleUpdateSchema = z.strictObject({
  cidr: z.string().optional(),
  ...described,
});

/** `POST /vaults` (`name` required) and `PATCH /vaults/{id}`. */
export const vaultCreateSchema = z.strictObject({ name: z.string(), ...described });
export const vaultUpdateSchema = vaultCreateSchema.partial();

/** `POST /vault_secrets`: the vault by `vault_id` or `vault_name`. */
export const secretCreateSchema = z.strictObject({
  name: z.string(),
  value: z.string(),
  vault_id: z.string().optional(),
  vault_name: z.string().optional(),
  ...described,
});

/** `PATCH /vault_secrets/{id}`: a secret never moves to another vault in place. */
export const secretUpdateSchema = z.strictObject({
  name: z.string().optional(),
  value: z.string().optional(),
  ...described,
});

export type IpPolicyWrite = z.input<typeof ipPolicyWriteSchema>;
export type IpPolicyRuleCreate = z.input<typeof ipPolicyRuleCreateSchema>;
export type IpPolicyRuleUpdate = z.input<typeof ipPolicyRuleUpdateSchema>;
export type VaultCreate = z.input<typeof vaultCreateSchema>;
export type VaultUpdate = z.input<typeof vaultUpdateSchema>;
export type SecretCreate = z.input<typeof secretCreateSchema>;
export type SecretUpdate = z.input<typeof secretUpdateSchema>;

export type ReservedDomain = z.infer<typeof reservedDomainSchema>;
export type ReservedDomainCreate = z.input<typeof reservedDomainCreateSchema>;
export type ReservedDomainUpdate = z.input<typeof reservedDomainUpdateSchema>;
export type CertificateAuthority = z.infer<typeof certificateAuthoritySchema>;
export type CertificateAuthorityCreate = z.input<typeof certificateAuthorityCreateSchema>;
export type CertificateAuthorityUpdate = z.input<typeof certificateAuthorityUpdateSchema>;
export type ServiceUser = z.infer<typeof serviceUserSchema>;
export type ServiceUserCreate = z.input<typeof serviceUserCreateSchema>;
export type ServiceUserUpdate = z.input<typeof serviceUserUpdateSchema>;
