/**
 * Normalize + diff per module: for every module of every owner, added / changed / removed /
 * unchanged under the local server's defaults, plus the individual normalization rules.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as M from '../../../src/manifest/schema.js';
import { diffModule, fieldChanges, Sensitivity } from '../../../src/plan/diff.js';
import { canonicalModule, liveModuleToWrite } from '../../../src/plan/normalize.js';
import { serverRead } from './builders.js';

/** A whole circuit breaker: every field the service needs. */
const CB = { tripped_duration: 10, rolling_window: 10, num_buckets: 10, volume_threshold: 20 };

type Owner = 'tls_edge' | 'https_edge' | 'route';
interface Case {
  owner: Owner;
  module: string;
  value: unknown;
  changed: unknown;
  /** A field path that the change touches. */
  path: string;
}

const IDP = '<EntityDescriptor entityID="https://idp.example.com"/>';

const cases: Case[] = [
  {
    owner: 'tls_edge',
    module: 'backend',
    value: { backend_id: 'bkdhr_1' },
    changed: { backend_id: 'bkdhr_2' },
    path: 'backend.backend_id',
  },
  {
    owner: 'tls_edge',
    module: 'ip_restriction',
    value: { ip_policy_ids: ['ipp_b', 'ipp_a'] },
    changed: { ip_policy_ids: ['ipp_a'] },
    path: 'ip_restriction.ip_policy_ids',
  },
  {
    owner: 'tls_edge',
    module: 'mutual_tls',
    value: { certificate_authority_ids: ['ca_1'] },
    changed: { enabled: false, certificate_authority_ids: ['ca_1'] },
    path: 'mutual_tls.enabled',
  },
  {
    owner: 'tls_edge',
    module: 'tls_termination',
    value: { terminate_at: 'upstream' },
    changed: { terminate_at: 'edge', min_version: '1.3' },
    path: 'tls_termination.min_version',
  },
  {
    owner: 'tls_edge',
    module: 'traffic_policy',
    value: { value: { on_http_request: [] } },
    changed: { value: 'x' },
    path: 'traffic_policy.value',
  },
  {
    owner: 'https_edge',
    module: 'mutual_tls',
    value: { certificate_authority_ids: ['ca_2', 'ca_1'] },
    changed: { certificate_authority_ids: ['ca_3'] },
    path: 'mutual_tls.certificate_authority_ids',
  },
  {
    owner: 'https_edge',
    module: 'tls_termination',
    value: {},
    changed: { min_version: '1.3' },
    path: 'tls_termination.min_version',
  },
  {
    owner: 'route',
    module: 'backend',
    value: { backend_id: 'bkdtg_1' },
    changed: { enabled: false, backend_id: 'bkdtg_1' },
    path: 'backend.enabled',
  },
  {
    owner: 'route',
    module: 'ip_restriction',
    value: { ip_policy_ids: ['ipp_1'] },
    changed: { ip_policy_ids: ['ipp_1', 'ipp_2'] },
    path: 'ip_restriction.ip_policy_ids',
  },
  {
    owner: 'route',
    module: 'circuit_breaker',
    value: { ...CB, error_threshold_percentage: 0.25 },
    changed: { ...CB, error_threshold_percentage: 0.25, num_buckets: 20 },
    path: 'circuit_breaker.num_buckets',
  },
  {
    owner: 'route',
    module: 'compression',
    value: {},
    changed: { enabled: false },
    path: 'compression.enabled',
  },
  {
    owner: 'route',
    module: 'request_headers',
    value: { add: { 'X-Env': 'prod' } },
    changed: { add: { 'X-Env': 'dev' } },
    path: 'request_headers.add["x-env"]',
  },
  {
    owner: 'route',
    module: 'response_headers',
    value: { add: { 'X-Frame-Options': 'DENY' }, remove: ['Server'] },
    changed: { add: { 'X-Frame-Options': 'DENY' } },
    path: 'response_headers.remove',
  },
  {
    owner: 'route',
    module: 'webhook_verification',
    value: { provider: 'GitHub', secret: 's3cret' },
    changed: { provider: 'github', secret: 'other' },
    path: 'webhook_verification.secret',
  },
  {
    owner: 'route',
    module: 'oauth',
    value: { provider: { google: { email_domains: ['example.com'] } } },
    changed: { provider: { google: { email_domains: ['example.org'] } } },
    path: 'oauth.provider.google.email_domains',
  },
  {
    owner: 'route',
    module: 'saml',
    value: { idp_metadata: IDP },
    changed: { idp_metadata: IDP, force_authn: true },
    path: 'saml.force_authn',
  },
  {
    owner: 'route',
    module: 'oidc',
    value: { issuer: 'https://id.example.com', client_id: 'c', client_secret: 's' },
    changed: {
      issuer: 'https://id.example.com',
      client_id: 'c',
      client_secret: 's',
      scopes: ['openid'],
    },
    path: 'oidc.scopes',
  },
  {
    owner: 'route',
    module: 'websocket_tcp_converter',
    value: {},
    changed: { enabled: false },
    path: 'websocket_tcp_converter.enabled',
  },
  {
    owner: 'route',
    module: 'user_agent_filter',
    value: { deny: ['curl/.*'] },
    changed: { deny: ['curl/.*', 'wget/.*'] },
    path: 'user_agent_filter.deny',
  },
  {
    owner: 'route',
    module: 'traffic_policy',
    value: { enabled: false, value: '{}' },
    changed: { enabled: true, value: '{}' },
    path: 'traffic_policy.enabled',
  },
];

function manifestValue(c: Case, which: 'value' | 'changed'): Record<string, unknown> {
  const schema = (M.MANIFEST_MODULES[c.owner] as Readonly<Record<string, z.ZodType>>)[c.module];
  return schema?.parse(c[which]) as Record<string, unknown>;
}

function live(c: Case): Record<string, unknown> | undefined {
  return liveModuleToWrite(c.module, serverRead(c.owner, c.module, manifestValue(c, 'value')));
}

const named = cases.map((c) => ({ ...c, name: `${c.owner}.${c.module}` }));
const none = new Sensitivity([]);

describe('diffModule per module', () => {
  it.each(named)('$name: unchanged under server defaults', (c) => {
    const d = diffModule(c.module, manifestValue(c, 'value'), live(c));
    expect(d?.status).toBe('unchanged');
  });

  it.each(named)('$name: added', (c) => {
    const d = diffModule(c.module, manifestValue(c, 'value'), undefined);
    expect(d?.status).toBe('set');
    expect(d?.before).toBeUndefined();
  });

  it.each(named)('$name: changed', (c) => {
    const d = diffModule(c.module, manifestValue(c, 'changed'), live(c));
    expect(d?.status).toBe('set');
    const fields = fieldChanges([c.module], d?.before, d?.after, none);
    expect(fields.map((f) => f.path)).toContain(c.path);
  });

  it.each(named)('$name: removed', (c) => {
    const d = diffModule(c.module, undefined, live(c));
    expect(d?.status).toBe('removed');
    expect(d?.after).toBeUndefined();
  });

  it('is undefined for a module set on neither side', () => {
    expect(diffModule('backend', undefined, undefined)).toBeUndefined();
  });
});

describe('normalization rules', () => {
  it('turns Refs into IDs and drops server-made SAML fields', () => {
    expect(
      liveModuleToWrite('ip_restriction', {
        enabled: true,
        ip_policies: [{ id: 'ipp_1', uri: 'https://x/ip_policies/ipp_1' }],
      }),
    ).toEqual({ enabled: true, ip_policy_ids: ['ipp_1'] });
    const saml = liveModuleToWrite('saml', serverRead('route', 'saml', { idp_metadata: IDP }));
    expect(Object.keys(saml ?? {})).not.toContain('entity_id');
    expect(Object.keys(saml ?? {})).not.toContain('request_signing_certificate_pem');
  });

  it.each([
    [
      'null providers and null client_id',
      'oauth',
      { enabled: true, provider: { google: {} } },
      {
        enabled: true,
        provider: {
          github: null,
          google: {
            client_id: null,
            client_secret: null,
            scopes: [],
            email_addresses: [],
            email_domains: [],
          },
        },
        options_passthrough: false,
        cookie_prefix: 'svc.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        auth_check_interval: 0,
      },
    ],
    [
      'remove: [] and add: {}',
      'request_headers',
      { enabled: true },
      { enabled: true, add: {}, remove: [] },
    ],
    [
      'webhook secret null',
      'webhook_verification',
      { enabled: true, provider: 'sns' },
      { enabled: true, provider: 'sns', secret: null },
    ],
    [
      'list order',
      'user_agent_filter',
      { enabled: true, allow: ['b', 'a'] },
      { enabled: true, allow: ['a', 'b'], deny: [] },
    ],
    [
      'header name case',
      'response_headers',
      { enabled: true, add: { 'X-A': '1' }, remove: ['Server'] },
      { enabled: true, add: { 'x-a': '1' }, remove: ['server'] },
    ],
    [
      'webhook provider case',
      'webhook_verification',
      { enabled: true, provider: 'Stripe', secret: 'k' },
      { enabled: true, provider: 'stripe', secret: 'k' },
    ],
    [
      'server-chosen defaults the manifest leaves unset',
      'oauth',
      { enabled: true, provider: { github: {} } },
      {
        enabled: true,
        provider: { github: {} },
        cookie_prefix: 'svc.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        auth_check_interval: 0,
      },
    ],
    [
      'min_version and terminate_at unset',
      'tls_termination',
      { enabled: true },
      { enabled: true, terminate_at: 'edge', min_version: '1.2' },
    ],
  ])('%s compare equal', (_name, module, desired, liveValue) => {
    expect(diffModule(module, desired, liveValue)?.status).toBe('unchanged');
  });

  // Defaults are values: an unset field means the service's documented default.
  it.each([
    [
      'TLS downgraded by hand',
      'tls_termination',
      {},
      { terminate_at: 'edge', min_version: '1.0' },
      'set',
    ],
    [
      'TLS at its default',
      'tls_termination',
      {},
      { terminate_at: 'edge', min_version: '1.2' },
      'unchanged',
    ],
    [
      'upstream: no min_version',
      'tls_termination',
      { terminate_at: 'upstream' },
      { terminate_at: 'upstream', min_version: null },
      'unchanged',
    ],
    [
      'TLS terminated at the agent by hand',
      'tls_termination',
      {},
      { terminate_at: 'agent', min_version: '1.2' },
      'set',
    ],
    [
      'SAML IdP-initiated login turned off by hand',
      'saml',
      { idp_metadata: '<x/>' },
      {
        idp_metadata: '<x/>',
        allow_idp_initiated: false,
        force_authn: false,
        cookie_prefix: '',
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        inactivity_timeout: 0,
        maximum_duration: 0,
        options_passthrough: false,
      },
      'set',
    ],
    [
      'SAML at its defaults',
      'saml',
      { idp_metadata: '<x/>' },
      {
        idp_metadata: '<x/>',
        allow_idp_initiated: true,
        force_authn: false,
        cookie_prefix: '',
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        inactivity_timeout: 0,
        maximum_duration: 0,
        options_passthrough: false,
      },
      'unchanged',
    ],
    [
      'an OIDC cookie prefix set by hand',
      'oidc',
      { issuer: 'https://i', client_id: 'c', client_secret: 's' },
      {
        issuer: 'https://i',
        client_id: 'c',
        client_secret: 's',
        cookie_prefix: 'x.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        options_passthrough: false,
      },
      'set',
    ],
    [
      'an OAuth session timer set by hand',
      'oauth',
      { provider: { google: {} } },
      {
        provider: { google: {} },
        cookie_prefix: 'svc.',
        inactivity_timeout: 300,
        maximum_duration: 0,
        auth_check_interval: 0,
      },
      'set',
    ],
    [
      'a circuit breaker threshold at 0',
      'circuit_breaker',
      { tripped_duration: 1, rolling_window: 1, num_buckets: 1, volume_threshold: 1 },
      {
        tripped_duration: 1,
        rolling_window: 1,
        num_buckets: 1,
        volume_threshold: 1,
        error_threshold_percentage: 0,
      },
      'unchanged',
    ],
  ] as const)('%s: %s', (_name, module, desired, liveValue, status) => {
    expect(
      diffModule(module, { enabled: true, ...desired }, { enabled: true, ...liveValue })?.status,
    ).toBe(status);
  });

  it.each([
    [
      'a set server default the live value differs from',
      'tls_termination',
      { enabled: true, min_version: '1.3' },
      { enabled: true, terminate_at: 'edge', min_version: '1.2' },
    ],
    [
      'a list the manifest dropped',
      'oauth',
      { enabled: true, provider: { google: {} } },
      { enabled: true, provider: { google: { email_domains: ['evil.example'] } } },
    ],
    [
      'a provider switch',
      'oauth',
      { enabled: true, provider: { google: {} } },
      { enabled: true, provider: { github: {} } },
    ],
    [
      'a boolean the manifest dropped',
      'saml',
      { enabled: true, idp_metadata: IDP },
      { enabled: true, idp_metadata: IDP, force_authn: true },
    ],
    ['enabled false', 'compression', { enabled: true }, { enabled: false }],
    [
      'a header value',
      'request_headers',
      { enabled: true, add: { 'X-A': '1' } },
      { enabled: true, add: { 'x-a': '2' } },
    ],
  ])('%s is a change', (_name, module, desired, liveValue) => {
    expect(diffModule(module, desired, liveValue)?.status).toBe('set');
  });

  it('keeps zero-valued enabled', () => {
    expect(canonicalModule('compression', { enabled: false })).toEqual({ enabled: false });
  });
});

describe('field changes', () => {
  it('walks objects, keeps lists whole and marks secrets', () => {
    const before = canonicalModule('oauth', {
      enabled: true,
      provider: { google: { client_id: 'a', client_secret: 'old', scopes: ['x'] } },
    });
    const after = canonicalModule('oauth', {
      enabled: true,
      provider: { google: { client_id: 'a', client_secret: 'new', scopes: ['x', 'y'] } },
    });
    expect(fieldChanges(['oauth'], before, after, new Sensitivity([]))).toEqual([
      { path: 'oauth.provider.google.client_secret', before: 'old', after: 'new', sensitive: true },
      { path: 'oauth.provider.google.scopes', before: ['x'], after: ['x', 'y'], sensitive: false },
    ]);
  });

  it.each([
    [
      'the path itself',
      [['request_headers', 'add', 'X-Key']],
      ['request_headers', 'add', 'x-key'],
      true,
    ],
    ['a list element below the field', [['hostports', 1]], ['hostports'], true],
    [
      'a field below a sensitive object',
      [['oauth']],
      ['oauth', 'provider', 'google', 'client_id'],
      true,
    ],
    ['an unrelated path', [['description']], ['descriptions'], false],
    ['a webhook secret by name', [], ['webhook_verification', 'secret'], true],
  ] as const)('sensitivity: %s', (_name, paths, path, expected) => {
    expect(new Sensitivity(paths).isSensitive(path)).toBe(expected);
  });
});
