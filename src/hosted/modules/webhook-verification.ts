/**
 * The webhook verification module of routes. Which providers exist and which need a secret
 * (all but `sns`) is checked in src/manifest/semantics.ts, from src/hosted/edge-api.ts.
 */
import { z } from 'zod';
import { refable, text } from './blocks.js';
import { defineModule, enabledField } from './field.js';

export const webhookVerification = defineModule({
  description:
    'Webhook verification module: every provider needs a secret except sns, which takes none.',
  fields: {
    enabled: enabledField(),
    provider: {
      presence: 'required',
      description: 'The service that signs the webhooks (e.g. github, stripe, sns).',
      manifest: refable(
        z
          .string()
          .min(1, { error: 'must not be empty' })
          .transform((v) => v.toLowerCase()),
      ),
      write: z.string(),
      read: z.string(),
      caseInsensitive: true,
      probes: { valid: ['github', 'GitHub', 'stripe'], invalid: ['', 'nope', 3] },
    },
    secret: {
      presence: 'optional',
      description: "The shared secret that signs the provider's webhooks.",
      manifest: text(),
      write: z.string(),
      read: z.string().nullish(),
      sensitive: true,
      probes: { valid: ['s3cret-value'], invalid: ['', 3] },
    },
  },
  example: { provider: 'github', secret: 'example-secret' },
});
