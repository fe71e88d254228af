/**
 * The local server's write schemas of the authentication modules of routes: OAuth (with its
 * providers), SAML and OIDC, with the session defaults of src/hosted/defaults.ts filled in.
 */
import { z } from 'zod';
import { MODULE_DEFAULTS } from '../hosted/defaults.js';
import {
  checkCookiePrefix,
  NAMEID_FORMATS,
  OAUTH_PROVIDERS,
  type OAuthProviderName,
} from '../hosted/edge-api.js';
import type { AUTH_MODULES } from '../hosted/modules/index.js';
import { enabled, obj, ruleIssue, uint32, uniqueList } from './schema-blocks.js';
export const lowerCaseList = uniqueList().refine((l) => l.every((v) => v === v.toLowerCase()), {
  message: 'entries must be lower-case',
});

export const oauthProviderFields = {
  client_id: z.string().min(1).nullish(),
  client_secret: z.string().min(1).nullish(),
  scopes: uniqueList().nullish(),
  email_addresses: lowerCaseList.nullish(),
  email_domains: lowerCaseList.nullish(),
};

export function oauthProviderSchema(github: boolean) {
  const shape = github
    ? {
        ...oauthProviderFields,
        teams: uniqueList(
          z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'teams entries must have the form <org>/<team>'),
        ).nullish(),
        organizations: uniqueList().nullish(),
      }
    : oauthProviderFields;
  return obj(shape)
    .superRefine((p, ctx) => {
      if ((p.client_id == null) !== (p.client_secret == null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['client_secret'],
          message: 'client_id and client_secret must be given together',
        });
      }
      if ((p.scopes?.length ?? 0) > 0 && (p.client_id == null || p.client_secret == null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['scopes'],
          message: 'scopes need your own client_id and client_secret',
        });
      }
    })
    .transform((p) => {
      const out: OAuthProviderRead = {
        client_id: p.client_id ?? null,
        client_secret: p.client_secret ?? null,
        scopes: p.scopes ?? [],
        email_addresses: p.email_addresses ?? [],
        email_domains: p.email_domains ?? [],
      };
      if (github) {
        const g = p as { teams?: string[] | null; organizations?: string[] | null };
        out.teams = g.teams ?? [];
        out.organizations = g.organizations ?? [];
      }
      return out;
    });
}

/** The read shape of one OAuth provider object (all fields present; teams/orgs on github only). */
export interface OAuthProviderRead {
  client_id: string | null;
  client_secret: string | null;
  scopes: string[];
  email_addresses: string[];
  email_domains: string[];
  teams?: string[];
  organizations?: string[];
}

export const githubProvider = oauthProviderSchema(true).nullish();
export const otherProvider = oauthProviderSchema(false).nullish();
export const oauthProviderShape = {
  github: githubProvider,
  facebook: otherProvider,
  microsoft: otherProvider,
  google: otherProvider,
  linkedin: otherProvider,
  gitlab: otherProvider,
  twitch: otherProvider,
  amazon: otherProvider,
} satisfies Record<OAuthProviderName, z.ZodType>;

export const oauthProvider = obj(oauthProviderShape)
  .refine((p) => OAUTH_PROVIDERS.filter((n) => p[n] != null).length === 1, {
    message: `provider must name exactly one of: ${OAUTH_PROVIDERS.join(', ')}`,
  })
  .transform((p) => {
    const out = {} as Record<OAuthProviderName, OAuthProviderRead | null>;
    for (const name of OAUTH_PROVIDERS) out[name] = p[name] ?? null;
    return out;
  });

export const sessionFields = {
  enabled,
  options_passthrough: z.boolean().nullish(),
  cookie_prefix: z
    .string()
    .superRefine((v, ctx) => ruleIssue(ctx, checkCookiePrefix(v)))
    .nullish(),
  inactivity_timeout: uint32.nullish(),
  maximum_duration: uint32.nullish(),
};

/** Session settings with the documented defaults of `module` (src/hosted/defaults.ts). */
export function sessionDefaults(
  module: (typeof AUTH_MODULES)[number],
  m: {
    enabled: boolean;
    options_passthrough?: boolean | null | undefined;
    cookie_prefix?: string | null | undefined;
    inactivity_timeout?: number | null | undefined;
    maximum_duration?: number | null | undefined;
  },
) {
  const d = MODULE_DEFAULTS[module] as Record<string, never>;
  return {
    enabled: m.enabled,
    options_passthrough: m.options_passthrough ?? d.options_passthrough,
    cookie_prefix: m.cookie_prefix ?? d.cookie_prefix,
    // 0 means "the service's default" for the session timers.
    inactivity_timeout: m.inactivity_timeout ?? d.inactivity_timeout,
    maximum_duration: m.maximum_duration ?? d.maximum_duration,
  };
}

export const oauthSchema = obj({
  ...sessionFields,
  provider: oauthProvider,
  auth_check_interval: uint32.nullish(),
}).transform((m) => {
  const { enabled, ...session } = sessionDefaults('oauth', m);
  // Field order of the read shape: enabled, provider, then the session settings.
  return {
    enabled,
    provider: m.provider,
    ...session,
    auth_check_interval:
      m.auth_check_interval ?? (MODULE_DEFAULTS.oauth?.auth_check_interval as number),
  };
});

export const samlSchema = obj({
  ...sessionFields,
  idp_metadata: z.string().refine((v) => v.trim().startsWith('<'), {
    message: 'idp_metadata must be the IdP EntityDescriptor XML',
  }),
  force_authn: z.boolean().nullish(),
  allow_idp_initiated: z.boolean().nullish(),
  authorized_groups: uniqueList().nullish(),
  nameid_format: z.enum(NAMEID_FORMATS).nullish(),
}).transform((m) => ({
  ...sessionDefaults('saml', m),
  idp_metadata: m.idp_metadata,
  force_authn: m.force_authn ?? (MODULE_DEFAULTS.saml?.force_authn as boolean),
  allow_idp_initiated:
    m.allow_idp_initiated ?? (MODULE_DEFAULTS.saml?.allow_idp_initiated as boolean),
  authorized_groups: m.authorized_groups ?? [],
  nameid_format: (m.nameid_format ??
    MODULE_DEFAULTS.saml?.nameid_format) as (typeof NAMEID_FORMATS)[number],
}));

export const oidcSchema = obj({
  ...sessionFields,
  issuer: z.string().refine(isHttpUrl, { message: 'issuer must be an http(s) URL' }),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  scopes: uniqueList().nullish(),
}).transform((m) => ({
  ...sessionDefaults('oidc', m),
  issuer: m.issuer,
  client_id: m.client_id,
  client_secret: m.client_secret,
  scopes: m.scopes ?? [],
}));

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
