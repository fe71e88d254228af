/** The SAML module of routes (at most one of oauth, oidc and saml per route). */
import { z } from 'zod';
import { DEFAULT_NAMEID_FORMAT, NAMEID_FORMATS } from '../edge-api.js';
import { nonEmptyText, refable, uniqueList } from './blocks.js';
import { defineModule, enabledField, enumProbes } from './field.js';
import { flagField, sessionFields } from './session.js';

export const saml = defineModule({
  description: 'SAML module (at most one of oauth, oidc and saml per route).',
  fields: {
    enabled: enabledField(),
    ...sessionFields(''),
    idp_metadata: {
      presence: 'required',
      description: "The identity provider's metadata: its EntityDescriptor XML.",
      manifest: nonEmptyText(),
      write: z.string(),
      read: z.string(),
      probes: { valid: ['<EntityDescriptor/>'], invalid: ['not xml', 3] },
    },
    force_authn: flagField('Whether users sign in again on every new session.'),
    allow_idp_initiated: flagField(
      'Whether sign-ins started at the identity provider are accepted.',
      true,
    ),
    authorized_groups: {
      presence: 'optional',
      description: 'Only members of these groups may sign in.',
      manifest: uniqueList(nonEmptyText()),
      write: z.array(z.string()),
      read: z.array(z.string()).nullish(),
      probes: { valid: [[], ['admins']], invalid: [['admins', 'admins'], 'admins'] },
    },
    nameid_format: {
      presence: 'optional',
      description: 'The NameID format requested from the identity provider.',
      manifest: refable(z.enum(NAMEID_FORMATS)),
      write: z.enum(NAMEID_FORMATS),
      read: z.string().nullish(),
      default: DEFAULT_NAMEID_FORMAT,
      probes: enumProbes(NAMEID_FORMATS),
    },
  },
  // Server-made: the planner ignores them, but they are part of the promised shape.
  serverFields: {
    entity_id: z.string(),
    assertion_consumer_service_url: z.string(),
    single_logout_url: z.string(),
    request_signing_certificate_pem: z.string(),
    metadata_url: z.string(),
  },
  example: { idp_metadata: '<EntityDescriptor/>' },
});
