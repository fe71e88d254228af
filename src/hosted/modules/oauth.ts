/**
 * The OAuth module of routes (at most one of oauth, oidc and saml per route). `provider` names
 * exactly one identity provider; the service's managed application has no settings at all.
 */
import { z } from 'zod';
import type { OAUTH_PROVIDERS } from '../edge-api.js';
import { lowerCase, nonEmptyText, refable, uniqueList } from './blocks.js';
import {
  defineModule,
  enabledField,
  type Field,
  type Fields,
  manifestShape,
  readShape,
  writeShape,
} from './field.js';
import { sessionFields, uint32Field } from './session.js';

const noProbes = { valid: [], invalid: [] };

const strings = (description: string, item: z.ZodType<string>, sensitive = false) =>
  ({
    presence: 'optional',
    description,
    manifest: item,
    write: z.string(),
    read: z.string().nullish(),
    ...(sensitive ? { sensitive } : {}),
    probes: noProbes,
  }) as const satisfies Field;

const list = (description: string, item: z.ZodType<string>) =>
  ({
    presence: 'optional',
    description,
    manifest: uniqueList(item),
    write: z.array(z.string()),
    read: z.array(z.string()).nullish(),
    probes: noProbes,
  }) as const satisfies Field;

/** Every provider's settings; without client_id and client_secret, the managed application. */
const providerFields = () => ({
  client_id: strings("Your OAuth application's client ID.", nonEmptyText()),
  client_secret: strings("Your OAuth application's client secret.", nonEmptyText(), true),
  scopes: list('OAuth scopes to request (needs client_id and client_secret).', nonEmptyText()),
  email_addresses: list(
    'Only these (lower-case) email addresses may sign in.',
    lowerCase('email addresses'),
  ),
  email_domains: list(
    'Only addresses in these (lower-case) domains may sign in.',
    lowerCase('email domains'),
  ),
});

const githubFields = () => ({
  ...providerFields(),
  teams: list(
    'Only members of these teams ("<org>/<team>") may sign in.',
    refable(z.string().regex(/^[^/\s]+\/[^/\s]+$/, { error: 'teams are written "<org>/<team>"' })),
  ),
  organizations: list('Only members of these organizations may sign in.', nonEmptyText()),
});

/** One provider's settings as a field of `provider`: a strict object of its own fields. */
function provider<F extends Fields>(name: string, fields: F) {
  return {
    presence: 'optional',
    description: `The ${name} identity provider's settings.`,
    manifest: z.strictObject(manifestShape(fields)),
    write: z.strictObject(writeShape(fields)),
    read: z.object(readShape(fields)).nullish(),
    nested: fields,
    probes: noProbes,
  } as const satisfies Field;
}

const providers = {
  github: provider('GitHub', githubFields()),
  facebook: provider('Facebook', providerFields()),
  microsoft: provider('Microsoft', providerFields()),
  google: provider('Google', providerFields()),
  linkedin: provider('LinkedIn', providerFields()),
  gitlab: provider('GitLab', providerFields()),
  twitch: provider('Twitch', providerFields()),
  amazon: provider('Amazon', providerFields()),
} satisfies Record<(typeof OAUTH_PROVIDERS)[number], Field>;

export const oauth = defineModule({
  description: 'OAuth module (at most one of oauth, oidc and saml per route).',
  fields: {
    enabled: enabledField(),
    ...sessionFields('svc.'),
    provider: {
      presence: 'required',
      description:
        'Exactly one identity provider. client_id and client_secret go together; scopes need both.',
      manifest: z.strictObject(manifestShape(providers)),
      write: z.strictObject(writeShape(providers)),
      // Every provider key is listed, null for the unused ones; a missing key reads as null too.
      read: z.object(readShape(providers)),
      nested: providers,
      oneOf: true,
      probes: {
        valid: [
          { google: {} },
          { github: { client_id: 'id', client_secret: 'secret', teams: ['org/team'] } },
        ],
        invalid: [
          {},
          { google: {}, github: {} },
          { google: { client_id: 'id' } },
          { github: { teams: ['no-slash'] } },
          { myspace: {} },
        ],
      },
    },
    auth_check_interval: uint32Field('Seconds between checks that the user may still sign in.'),
  },
  // The manifest lists the provider first, as it always has; live records after the session.
  manifestOrder: [
    'enabled',
    'provider',
    'options_passthrough',
    'cookie_prefix',
    'inactivity_timeout',
    'maximum_duration',
    'auth_check_interval',
  ],
  example: { provider: { google: {} } },
});
