/**
 * The wire shapes of the account resources (account-resources.md sections 1, 4 and 5):
 * reserved domains, certificate authorities and service users, read shapes (validated at the
 * client edge, tolerant of fields the service adds, as the other read shapes are) and write
 * shapes (typing the client's request bodies). Every type here is inferred from its schema.
 */
import { z } from 'zod';

const page = { uri: z.string(), next_page_uri: z.string().nullable() };
const ref = z.object({ id: z.string() });

// ---- reserved domains

const certificateManagementPolicy = z.object({
  authority: z.string(),
  private_key_type: z.string(),
});

export const reservedDomainSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  domain: z.string(),
  description: z.string().optional(),
  metadata: z.string().optional(),
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
  description: z.string().optional(),
  metadata: z.string().optional(),
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
  description: z.string().optional(),
  metadata: z.string().optional(),
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
  description: z.string().optional(),
  metadata: z.string().optional(),
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

export type ReservedDomain = z.infer<typeof reservedDomainSchema>;
export type ReservedDomainCreate = z.input<typeof reservedDomainCreateSchema>;
export type ReservedDomainUpdate = z.input<typeof reservedDomainUpdateSchema>;
export type CertificateAuthority = z.infer<typeof certificateAuthoritySchema>;
export type CertificateAuthorityCreate = z.input<typeof certificateAuthorityCreateSchema>;
export type CertificateAuthorityUpdate = z.input<typeof certificateAuthorityUpdateSchema>;
export type ServiceUser = z.infer<typeof serviceUserSchema>;
export type ServiceUserCreate = z.input<typeof serviceUserCreateSchema>;
export type ServiceUserUpdate = z.input<typeof serviceUserUpdateSchema>;
