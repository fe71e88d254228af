/** The OpenID Connect module of routes (at most one of oauth, oidc and saml per route). */
import { z } from 'zod';
import { nonEmptyText, refable, uniqueList } from './blocks.js';
import { defineModule, enabledField } from './field.js';
import { sessionFields } from './session.js';

export const oidc = defineModule({
  description: 'OpenID Connect module (at most one of oauth, oidc and saml per route).',
  fields: {
    enabled: enabledField(),
    ...sessionFields(''),
    issuer: {
      presence: 'required',
      description: "The identity provider's issuer URL.",
      manifest: refable(z.url({ error: 'must be a URL' })),
      write: z.string(),
      read: z.string(),
      probes: { valid: ['https://id.example.com'], invalid: ['not a url', 3] },
    },
    client_id: {
      presence: 'required',
      description: 'The client ID registered with the identity provider.',
      manifest: nonEmptyText(),
      write: z.string(),
      read: z.string(),
      probes: { valid: ['client'], invalid: ['', 3] },
    },
    client_secret: {
      presence: 'required',
      description: 'The client secret registered with the identity provider.',
      manifest: nonEmptyText(),
      write: z.string(),
      read: z.string().nullish(),
      sensitive: true,
      probes: { valid: ['secret'], invalid: ['', 3] },
    },
    scopes: {
      presence: 'optional',
      description: 'Scopes to request besides openid.',
      manifest: uniqueList(nonEmptyText()),
      write: z.array(z.string()),
      read: z.array(z.string()).nullish(),
      probes: { valid: [[], ['email']], invalid: [['email', 'email'], 'email'] },
    },
  },
  example: { issuer: 'https://id.example.com', client_id: 'client', client_secret: 'secret' },
});
