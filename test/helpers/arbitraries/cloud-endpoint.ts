/**
 * Valid cloud endpoints, each rendered two ways from one drawn case: the `kind: CloudEndpoint`
 * manifest (`manifestDoc`, `manifestText`; the policy as a YAML mapping, or as a YAML or JSON
 * string on some runs; secrets literal or `{ env }`) and the API create body (`createBody`),
 * with the record the service answers for it (`expectedRecord`). URLs cover every scheme,
 * binding and port form, written in any case and with or without the default port.
 * `cloudEndpointSet` draws a set that can coexist in one account (unique names; a shared URL
 * and binding only where every holder pools). `FAULTS` are single-fault mutations, each naming
 * the rule it breaks and the code the service answers.
 */
import fc from 'fast-check';
import { stringify } from 'yaml';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type { Binding, Scheme } from '../cloud-spec.js';
import { isSecretSlot, type Policy, trafficPolicy } from './policy.js';

export interface CloudEndpointCase {
  readonly name: string;
  readonly scheme: Scheme;
  /** As written in the manifest and sent. */
  readonly url: string;
  /** As the service stores it (section 2's normalisation). */
  readonly normalisedUrl: string;
  readonly binding: Binding;
  /** Whether the manifest writes `bindings` (else the default applies). */
  readonly bindingWritten: boolean;
  /** Undefined: not written (false by default). */
  readonly pooling: boolean | undefined;
  readonly description: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  /** The policy as data, secrets as slots. */
  readonly policy: Policy;
  readonly policyAs: 'mapping' | 'yaml' | 'json';
}

const DEFAULT_PORT: Readonly<Partial<Record<Scheme, number>>> = { https: 443, http: 80, tls: 443 };

interface UrlParts {
  readonly scheme: Scheme;
  readonly host: string;
  readonly port: number | undefined;
  readonly binding: Binding;
}

const anyPort = fc.integer({ min: 1, max: 65_535 });
const label = fc.constantFrom('web', 'api', 'db', 'cache', 'auth');

function publicUrl(hosts: readonly string[]): fc.Arbitrary<UrlParts> {
  const host = fc.constantFrom(...hosts);
  const p = (scheme: Scheme, port: fc.Arbitrary<number | undefined>) =>
    fc.record({ scheme: fc.constant(scheme), host, port, binding: fc.constant<Binding>('public') });
  return fc.oneof(
    p('https', fc.constantFrom(undefined, 443)),
    p('http', fc.constantFrom(undefined, 80)),
    p('tls', fc.constantFrom(undefined, 443)),
    p('tcp', anyPort),
  );
}

const internalUrl: fc.Arbitrary<UrlParts> = fc
  .record({
    scheme: fc.constantFrom<Scheme>('https', 'http', 'tls', 'tcp'),
    host: fc.oneof(
      label.map((l) => `${l}.internal`),
      label.map((l) => `${l}.svc.internal`),
    ),
    port: fc.option(anyPort, { nil: undefined }),
  })
  .map((u) => ({
    ...u,
    port: u.scheme === 'tcp' ? (u.port ?? 5432) : u.port,
    binding: 'internal' as const,
  }));

const kubernetesUrl: fc.Arbitrary<UrlParts> = fc
  .record({
    scheme: fc.constantFrom<Scheme>('http', 'tcp'),
    host: fc.tuple(label, fc.constantFrom('default', 'prod')).map(([n, ns]) => `${n}.${ns}`),
    port: fc.option(anyPort, { nil: undefined }),
  })
  .map((u) => ({
    ...u,
    port: u.scheme === 'tcp' ? (u.port ?? 9000) : u.port,
    binding: 'kubernetes' as const,
  }));

/** The URL as written (any case, the default port written or not) and normalised. */
function written(u: UrlParts, upper: { scheme: boolean; host: boolean }) {
  const portPart = u.port === undefined ? '' : `:${u.port}`;
  const scheme = upper.scheme ? u.scheme.toUpperCase() : u.scheme;
  const host = upper.host ? u.host.replace(/^[a-z]/, (c) => c.toUpperCase()) : u.host;
  const port = u.port ?? DEFAULT_PORT[u.scheme];
  const dropped = (u.scheme === 'https' || u.scheme === 'http') && port === DEFAULT_PORT[u.scheme];
  return {
    url: `${scheme}://${host}${portPart}`,
    normalisedUrl: `${u.scheme}://${u.host}${dropped ? '' : `:${port}`}`,
  };
}

export interface CloudEndpointOptions {
  /** Public hosts to draw from (overlap them with edges' hostports to test the ordering). */
  readonly hosts?: readonly string[];
  /** Names to draw from. */
  readonly names?: readonly string[];
}

const DEFAULT_HOSTS = [
  'app.example.com',
  'api.example.com',
  'shop.example.com',
  'mail.example.com',
];
const DEFAULT_NAMES = ['web', 'api', 'shop', 'mail', 'db', 'cache'];

/** One valid cloud endpoint. */
export function cloudEndpoint(opts: CloudEndpointOptions = {}): fc.Arbitrary<CloudEndpointCase> {
  const url = fc.oneof(
    { arbitrary: publicUrl(opts.hosts ?? DEFAULT_HOSTS), weight: 3 },
    internalUrl,
    kubernetesUrl,
  );
  return url.chain((u) =>
    fc
      .record({
        name: fc.constantFrom(...(opts.names ?? DEFAULT_NAMES)),
        upper: fc.record({ scheme: fc.boolean(), host: fc.boolean() }),
        bindingWritten: u.binding === 'kubernetes' ? fc.constant(true) : fc.boolean(),
        pooling: fc.option(fc.boolean(), { nil: undefined }),
        description: fc.option(
          fc.string({ unit: fc.constantFrom(...'abc xyz-é日'), minLength: 1, maxLength: 40 }),
          { nil: undefined },
        ),
        labels: fc.dictionary(
          fc.constantFrom('team', 'tier', 'env'),
          fc.constantFrom('web', 'ops', '1', 'prod'),
          { maxKeys: 2 },
        ),
        // An internal http(s) endpoint has no on_tcp_connect phase (2262).
        policy: trafficPolicy(u.scheme).map((p) => {
          if (u.binding !== 'internal' || (u.scheme !== 'https' && u.scheme !== 'http')) return p;
          const { on_tcp_connect: _dropped, ...rest } = p;
          return rest;
        }),
        policyAs: fc.constantFrom('mapping', 'mapping', 'yaml', 'json'),
      })
      .map((r) => ({
        name: r.name,
        scheme: u.scheme,
        ...written(u, r.upper),
        binding: u.binding,
        bindingWritten: r.bindingWritten,
        pooling: r.pooling,
        description: r.description,
        labels: r.labels,
        policy: r.policy,
        policyAs: r.policyAs as CloudEndpointCase['policyAs'],
      })),
  );
}

/**
 * Endpoints that can coexist in one account: unique names, and a URL and binding shared only
 * where every holder pools (the others are made to pool).
 */
export function cloudEndpointSet(
  opts: CloudEndpointOptions & { readonly maxLength?: number } = {},
): fc.Arbitrary<CloudEndpointCase[]> {
  return fc
    .uniqueArray(cloudEndpoint(opts), { maxLength: opts.maxLength ?? 4, selector: (c) => c.name })
    .map((cases) => {
      const count = new Map<string, number>();
      const key = (c: CloudEndpointCase) => `${c.normalisedUrl} ${c.binding}`;
      for (const c of cases) count.set(key(c), (count.get(key(c)) ?? 0) + 1);
      return cases.map((c) => ((count.get(key(c)) ?? 0) > 1 ? { ...c, pooling: true } : c));
    });
}

/** The policy with every secret slot replaced: by its value, or by `{ env }` where `envRefs`. */
function render(value: unknown, envRefs: boolean): unknown {
  if (isSecretSlot(value)) {
    return envRefs && value.$env !== undefined ? { env: value.$env } : value.$secret;
  }
  if (Array.isArray(value)) return value.map((v) => render(v, envRefs));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, envRefs)]));
  }
  return value;
}

/** The policy as the service stores it, parsed: every secret resolved. */
export function resolvedPolicy(c: CloudEndpointCase): unknown {
  return render(c.policy, false);
}

/** The environment the manifest's `{ env }` references read. */
export function envOf(cases: readonly CloudEndpointCase[]): Record<string, string> {
  const env: Record<string, string> = {};
  const walk = (value: unknown): void => {
    if (isSecretSlot(value)) {
      if (value.$env !== undefined) env[value.$env] = value.$secret;
    } else if (typeof value === 'object' && value !== null) {
      for (const v of Object.values(value)) walk(v);
    }
  };
  for (const c of cases) if (c.policyAs === 'mapping') walk(c.policy);
  return env;
}

/** The policy's text when the manifest or the body writes it as a string. */
function policyText(c: CloudEndpointCase): string {
  const data = resolvedPolicy(c);
  return c.policyAs === 'json' ? JSON.stringify(data, null, 2) : stringify(data);
}

/** The `kind: CloudEndpoint` manifest document (for `writeManifests`). */
export function manifestDoc(c: CloudEndpointCase): Record<string, unknown> {
  const doc: Record<string, unknown> = { kind: 'CloudEndpoint', name: c.name, url: c.url };
  if (c.bindingWritten) doc.bindings = [c.binding];
  if (c.pooling !== undefined) doc.pooling_enabled = c.pooling;
  if (c.description !== undefined) doc.description = c.description;
  if (Object.keys(c.labels).length > 0) doc.metadata = { ...c.labels };
  doc.traffic_policy = c.policyAs === 'mapping' ? render(c.policy, true) : policyText(c);
  return doc;
}

/** The manifest file's text. */
export function manifestText(c: CloudEndpointCase): string {
  return stringify(manifestDoc(c));
}

/** What edgesync stores in an endpoint's `metadata` (the labels and its ownership keys). */
export function storedMetadataOf(c: CloudEndpointCase): string {
  return storedMetadata(c.labels, { owner: 'default', name: c.name, protect: false });
}

/** The API create body for the endpoint. */
export function createBody(c: CloudEndpointCase): Record<string, unknown> {
  const body: Record<string, unknown> = {
    url: c.url,
    traffic_policy: c.policyAs === 'mapping' ? JSON.stringify(resolvedPolicy(c)) : policyText(c),
    metadata: storedMetadataOf(c),
  };
  if (c.bindingWritten) body.bindings = [c.binding];
  if (c.pooling !== undefined) body.pooling_enabled = c.pooling;
  if (c.description !== undefined) body.description = c.description;
  return body;
}

/** The fields of the record the service answers for `createBody(c)` (policy: parse it). */
export function expectedRecord(c: CloudEndpointCase): Record<string, unknown> {
  return {
    type: 'cloud',
    url: c.normalisedUrl,
    bindings: [c.binding],
    pooling_enabled: c.pooling ?? false,
    ...(c.description === undefined ? {} : { description: c.description }),
    metadata: storedMetadataOf(c),
    scheme: c.scheme,
  };
}
