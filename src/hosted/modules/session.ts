/**
 * The session settings OAuth, OIDC and SAML share. Their defaults are what the service records
 * for a module that does not set them; only the cookie prefix differs between the three.
 */
import { z } from 'zod';
import { checkCookiePrefix, LIMITS } from '../edge-api.js';
import { refable, ruled, uint32 } from './blocks.js';
import { type Field, intProbes } from './field.js';

/** An unsigned 32-bit field of the authentication modules. */
export const uint32Field = (description: string) =>
  ({
    presence: 'optional',
    description,
    manifest: uint32(),
    write: z.number().int().min(0).max(LIMITS.uint32Max),
    read: z.number().int().min(0).nullish(),
    default: 0,
    probes: intProbes(0, LIMITS.uint32Max),
  }) as const satisfies Field;

/** A flag of the authentication modules, false unless set. */
export const flagField = (description: string, fallback = false) =>
  ({
    presence: 'optional',
    description,
    manifest: z.boolean(),
    write: z.boolean(),
    read: z.boolean().nullish(),
    default: fallback,
    probes: { valid: [true, false], invalid: ['yes', 0] },
  }) as const satisfies Field;

export const sessionFields = (cookiePrefix: string) => ({
  options_passthrough: flagField('Whether CORS preflight (OPTIONS) requests skip authentication.'),
  cookie_prefix: {
    presence: 'optional',
    description: "Prefix of the session cookies' names: letters, digits and periods.",
    manifest: refable(ruled(checkCookiePrefix)),
    write: z.string(),
    read: z.string().nullish(),
    default: cookiePrefix,
    probes: { valid: ['', 'app.', 'A1'], invalid: ['a-b', 'a b', 3] },
  } as const satisfies Field,
  inactivity_timeout: uint32Field('Seconds of inactivity after which a session ends (0: never).'),
  maximum_duration: uint32Field('Seconds after which a session ends however active (0: never).'),
});
