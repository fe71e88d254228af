/**
 * Certificate authorities (`/certificate_authorities`, `ca_`; account-resources.md section 4):
 * the CAs a cloud endpoint's `terminate-tls` names in `mutual_tls_certificate_authorities`, by
 * `{ ref: NAME }` in a manifest and by ID on the service. Owned through the owner mark in
 * `metadata`, planned generically (src/plan/generic.ts).
 *
 * - `ca_pem` cannot change in place (the update body takes description and metadata only): a
 *   new PEM replaces the CA. PEMs are compared with their whitespace normalised: the service
 *   returns the block ending with a newline whatever was sent.
 * - Pruned like endpoints (through the deletion guards), and deleted only after the endpoints
 *   being deleted in the same plan: the service lets a CA a policy names be deleted, and a
 *   controller orders that delete after the endpoints stop naming it (CLOUD_ENDPOINT's
 *   `refersTo`).
 * - The manifest's PEM is checked as the service checks it (one CERTIFICATE block, a CA), a
 *   located error in `validate`.
 */
import { z } from 'zod';
import { caPemProblem, normalisedPem } from '../hosted/ca-pem.js';
import {
  describedText,
  idPattern,
  labels,
  manifestName,
  refable,
  suspendFlag,
} from '../manifest/modules.js';
import type { Declared, KindDefinition, LiveRecord } from './definition.js';

/** The ID prefix of a certificate authority. */
const CA_ID_PREFIX = 'ca_';

const DESCRIPTION =
  'A certificate authority (PEM) that terminate-tls names for mutual TLS, by { ref: NAME }. A new ca_pem replaces it; id adopts an existing one.';

export const CertificateAuthoritySchema = z
  .strictObject({
    kind: z.literal('CertificateAuthority'),
    name: manifestName(),
    id: refable(
      z
        .string()
        .regex(idPattern(CA_ID_PREFIX), {
          error: `must be a certificate authority ID (${CA_ID_PREFIX}...)`,
        })
        .meta({ description: 'Adopt this existing certificate authority rather than create one.' }),
    ).optional(),
    ca_pem: refable(
      z
        .string()
        .superRefine((text, ctx) => {
          const problem = caPemProblem(text);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        })
        .meta({
          description:
            "The CA's certificate: exactly one PEM CERTIFICATE block whose basic constraints say CA:TRUE, inline or { file: corp-ca.pem }. Changing it replaces the certificate authority.",
        }),
    ),
    description: describedText().optional(),
    metadata: labels(),
    protect: z.boolean().default(false).meta({
      description: 'true: edgesync refuses to delete it, even after its manifest is gone.',
    }),
    ensure: refable(
      z.enum(['present', 'absent']).meta({ description: 'absent: delete it.' }),
    ).default('present'),
    suspend: suspendFlag(),
  })
  .meta({ description: DESCRIPTION });

type CertificateAuthorityDeclared = Declared & z.output<typeof CertificateAuthoritySchema>;

export const CERTIFICATE_AUTHORITY: KindDefinition = {
  kind: 'certificate_authority',
  plural: 'certificate_authorities',
  manifestKinds: ['CertificateAuthority'],
  description: DESCRIPTION,
  schema: CertificateAuthoritySchema,
  api: {
    list: 'listCertificateAuthorities',
    create: 'createCertificateAuthority',
    update: 'updateCertificateAuthority',
    delete: 'deleteCertificateAuthority',
  },
  ownership: { by: 'metadata' },
  fields: [
    {
      name: 'ca_pem',
      desired: (d) => normalisedPem((d as CertificateAuthorityDeclared).ca_pem),
      live: (l: LiveRecord) => normalisedPem(typeof l.ca_pem === 'string' ? l.ca_pem : ''),
      replace: true,
      createOnly: true,
    },
    {
      name: 'description',
      // Absent in the manifest is no description, as the service shows an unset one.
      desired: (d) => (d as CertificateAuthorityDeclared).description ?? '',
      live: (l: LiveRecord) => (typeof l.description === 'string' ? l.description : ''),
    },
  ],
  prune: true,
  order: 20,
};
