/**
 * Phase two of validation, within each document: rules that need more than one field (one auth
 * module per route, OAuth client rules, webhook secrets, the stored-metadata byte limit, reserved
 * labels, a cloud endpoint's binding and policy). Runs on documents that passed the shape phase;
 * the rules across documents are ./across.ts. Pure: positions come from an injected `where`.
 */
import type { z } from 'zod';
import {
  checkAuthRoutes,
  checkMutualTlsTermination,
  LIMITS,
  OAUTH_PROVIDERS,
  utf8Bytes,
  WEBHOOK_PROVIDER_WITHOUT_SECRET,
  WEBHOOK_PROVIDERS,
} from '../hosted/edge-api.js';
import { AUTH_MODULES, checkCircuitBreaker, HEADER_MODULES } from '../hosted/modules/index.js';
import { failureMessage, runCase } from '../policy-eval/cases.js';
import { bindingProblem, defaultBinding, parseEndpointUrl } from './endpoint-url.js';
import { storedMetadata, storedRouteMetadata } from './metadata.js';
import type { FieldPath } from './paths.js';
import { policyIssues } from './policy/rules.js';
import {
  genericKindOf,
  isServiceUser,
  type ManifestDocumentSchema,
  type OAuthSchema,
  RESERVED_LABEL_PREFIX,
  type RouteSchema,
  type ServiceUserKind,
} from './schema.js';
import { didYouMean } from './suggest.js';
import type { Anchor } from './yaml.js';

export type DocumentValue = z.output<typeof ManifestDocumentSchema>;

export interface SemanticDoc {
  /** The caller's handle for the document, echoed in issues. */
  readonly id: number;
  readonly value: DocumentValue;
  /** Paths of values read from env or file: a message never quotes any part of them. */
  readonly sensitive?: readonly FieldPath[];
}

export interface SemanticIssue {
  readonly doc: number;
  readonly path: FieldPath;
  readonly anchor?: Anchor;
  readonly message: string;
}

export interface SemanticOptions {
  /** Owner id written into edge metadata (counts towards the 4096-byte limit). */
  readonly owner: string;
  /** Run each cloud endpoint's own policy tests (a failing case is an issue at `tests[i]`). */
  readonly policyTests?: boolean;
  /** `file:line:column` of a path in a document, to name the other side of a conflict. */
  readonly where: (doc: number, path: FieldPath) => string;
}

/**
 * The rules within each document (labels, the metadata limit, TLS termination, routes, a cloud
 * endpoint's binding and policy): they
 * need nothing but the document, so they run while its file's parse is at hand, and any
 * position in it can be named.
 */
export function checkWithinDocuments(
  docs: readonly SemanticDoc[],
  options: SemanticOptions,
): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const add = (doc: number, path: FieldPath, message: string, anchor?: Anchor): void => {
    issues.push(anchor === undefined ? { doc, path, message } : { doc, path, message, anchor });
  };
  for (const { id: doc, value, sensitive } of docs) {
    if (value.kind === 'CloudEndpoint') checkEndpoint(doc, value, sensitive ?? [], add, options);
    else if (!isServiceUser(value) && genericKindOf(value.kind) === undefined)
      checkEdge(doc, value, options, add);
  }
  return issues;
}

type EndpointValue = Extract<DocumentValue, { kind: 'CloudEndpoint' }>;

/** The rules within one cloud endpoint: labels, the metadata limit, its binding, its policy. */
function checkEndpoint(
  doc: number,
  value: EndpointValue,
  sensitive: readonly FieldPath[],
  add: Add,
  options: SemanticOptions,
): void {
  checkLabels(doc, NO_PATH, value.metadata, add);
  checkStoredMetadata(doc, value, options, add);
  const url = parseEndpointUrl(value.url);
  if ('problem' in url) return; // reported by the shape phase
  // The default binding has rules too (a public https endpoint on another port than 443).
  const given = value.bindings?.[0];
  const binding = given ?? defaultBinding(url);
  const why = bindingProblem(url, binding);
  if (why !== undefined) {
    add(
      doc,
      given === undefined ? ['url'] : ['bindings', 0],
      `binding ${binding}${given === undefined ? ' (the default)' : ''}: ${why}`,
    );
  }
  const policy = value.traffic_policy;
  if (typeof policy !== 'object') return;
  const hidden = (path: FieldPath) =>
    sensitive.some(
      (s) =>
        s.length === path.length + 1 &&
        s[0] === 'traffic_policy' &&
        path.every((p, i) => p === s[i + 1]),
    );
  const issues = policyIssues(
    policy,
    { scheme: url.scheme, internal: binding === 'internal' },
    hidden,
  );
  for (const issue of issues) {
    const at = issue.offset === undefined ? undefined : { offset: issue.offset };
    add(doc, ['traffic_policy', ...issue.path], issue.message, at);
  }
  // The policy's own cases, once it is valid: a failing one refuses the endpoint.
  if (issues.length > 0 || options.policyTests === false) return;
  (value.tests ?? []).forEach((test, i) => {
    const result = runCase({ url: url.url, traffic_policy: policy }, test);
    if (!result.passed) add(doc, ['tests', i], failureMessage(result));
  });
}

/** The labels as stored with edgesync's own keys must fit the API's metadata limit. */
function checkStoredMetadata(
  doc: number,
  value: { name: string; protect: boolean; metadata: Readonly<Record<string, string>> },
  options: SemanticOptions,
  add: Add,
): void {
  const bytes = metadataMayExceed(value.metadata, options.owner, value.name)
    ? utf8Bytes(
        storedMetadata(value.metadata, {
          owner: options.owner,
          name: value.name,
          protect: value.protect,
        }),
      )
    : 0;
  if (bytes > LIMITS.metadataBytes) {
    add(
      doc,
      Object.keys(value.metadata).length > 0 ? ['metadata'] : ['name'],
      `stored metadata would be ${bytes} bytes (labels plus edgesync's own keys); the limit is ${LIMITS.metadataBytes}`,
    );
  }
}

/** The rules within one edge: labels, the metadata limit, TLS termination, routes. */
function checkEdge(
  doc: number,
  value: Exclude<DocumentValue, { kind: ServiceUserKind | 'CloudEndpoint' }>,
  options: SemanticOptions,
  add: Add,
): void {
  checkLabels(doc, NO_PATH, value.metadata, add);
  checkStoredMetadata(doc, value, options, add);

  if (value.kind === 'TLSEdge') {
    const tls = value.tls_termination;
    if (tls?.terminate_at === 'upstream' && tls.min_version !== undefined) {
      add(
        doc,
        ['tls_termination', 'min_version'],
        'min_version must not be set when terminate_at is "upstream" (TLS is not terminated here)',
      );
    }
    const mtls = checkMutualTlsTermination(tls?.terminate_at, value.mutual_tls !== undefined);
    if (mtls !== undefined) add(doc, ['mutual_tls'], mtls.message, 'key');
    return;
  }

  // At most one route of an HTTPS edge may carry an auth module: the second and later ones
  // are the errors, each pointing at its own module.
  const authRoutes: { r: number; m: string }[] = [];
  for (let r = 0; r < value.routes.length; r++) {
    const m = firstAuthModule(value.routes[r] as z.output<typeof RouteSchema>);
    if (m !== undefined) authRoutes.push({ r, m });
  }
  const tooMany = checkAuthRoutes(authRoutes.length);
  if (tooMany !== undefined) {
    const first = authRoutes[0] as { r: number; m: string };
    for (const { r, m } of authRoutes.slice(1)) {
      add(
        doc,
        ['routes', r, m],
        `${tooMany.message}; the first is at ${options.where(doc, ['routes', first.r, first.m])}`,
        'key',
      );
    }
  }

  const matches = new Map<string, number>();
  value.routes.forEach((route, r) => {
    const at = (...rest: FieldPath): FieldPath => ['routes', r, ...rest];
    const seen = matches.get(route.match);
    if (seen === undefined) matches.set(route.match, r);
    else {
      add(
        doc,
        at('match'),
        `duplicate route match "${route.match}" on this edge (first at ${options.where(doc, ['routes', seen, 'match'])})`,
      );
    }
    checkRoute(doc, route, at, add);
  });
}

/**
 * A cheap upper bound on the stored metadata's size (JSON escapes a UTF-16 unit into at most 6
 * bytes), so the exact serialisation is done only for edges that might be near the limit.
 */
function metadataMayExceed(
  labels: Readonly<Record<string, string>>,
  owner: string,
  name: string,
): boolean {
  // edgesync's own keys and quotes: 80 units is more than they take.
  return labelsMayExceed(labels, owner.length + name.length + 80);
}

/** The same bound for labels alone (a route's metadata), plus `extraUnits` written with them. */
function labelsMayExceed(labels: Readonly<Record<string, string>>, extraUnits: number): boolean {
  let units = extraUnits + 2;
  for (const key in labels) units += key.length + (labels[key]?.length ?? 0) + 6;
  return units * 6 > LIMITS.metadataBytes;
}

type Add = (doc: number, path: FieldPath, message: string, anchor?: Anchor) => void;

function checkLabels(
  doc: number,
  base: () => FieldPath,
  labels: Readonly<Record<string, string>>,
  add: Add,
): void {
  for (const key in labels) {
    if (key.startsWith(RESERVED_LABEL_PREFIX)) {
      add(
        doc,
        [...base(), 'metadata', key],
        `label prefix "${RESERVED_LABEL_PREFIX}" is reserved for edgesync's own keys`,
        'key',
      );
    }
  }
}

const NO_PATH = (): FieldPath => [];

/** The first auth module a route sets, if any (the rules allow one). */
function firstAuthModule(route: z.output<typeof RouteSchema>): string | undefined {
  for (const m of AUTH_MODULES) if (route[m] !== undefined) return m;
  return undefined;
}

function checkRoute(
  doc: number,
  route: z.output<typeof RouteSchema>,
  at: (...rest: FieldPath) => FieldPath,
  add: Add,
): void {
  checkLabels(doc, at, route.metadata, add);
  const stored = labelsMayExceed(route.metadata, 0)
    ? utf8Bytes(storedRouteMetadata(route.metadata))
    : 0;
  if (stored > LIMITS.metadataBytes) {
    add(
      doc,
      at('metadata'),
      `stored metadata would be ${stored} bytes; the limit is ${LIMITS.metadataBytes}`,
    );
  }
  checkOneAuth(doc, route, at, add);
  if (route.oauth !== undefined) checkOAuth(doc, route.oauth, at, add);
  if (route.circuit_breaker !== undefined) {
    for (const v of checkCircuitBreaker(route.circuit_breaker)) {
      add(doc, at('circuit_breaker', v.field), v.message);
    }
  }
  const webhook = route.webhook_verification;
  if (webhook !== undefined) checkWebhook(doc, webhook, at, add);
  for (const headers of HEADER_MODULES) {
    const added = route[headers]?.add;
    if (added !== undefined) checkHeaderNames(doc, added, at(headers, 'add'), add);
  }
}

/** At most one auth module per route: every one after the first is reported. */
function checkOneAuth(
  doc: number,
  route: z.output<typeof RouteSchema>,
  at: (...rest: FieldPath) => FieldPath,
  add: Add,
): void {
  const firstAuth = firstAuthModule(route);
  if (firstAuth === undefined) return;
  for (const extra of AUTH_MODULES) {
    if (extra === firstAuth || route[extra] === undefined) continue;
    add(
      doc,
      at(extra),
      `at most one of oauth, oidc and saml may be set on a route; this route also sets ${firstAuth}`,
      'key',
    );
  }
}

function checkWebhook(
  doc: number,
  webhook: NonNullable<z.output<typeof RouteSchema>['webhook_verification']>,
  at: (...rest: FieldPath) => FieldPath,
  add: Add,
): void {
  const known: readonly string[] = WEBHOOK_PROVIDERS;
  if (!known.includes(webhook.provider)) {
    add(
      doc,
      at('webhook_verification', 'provider'),
      `unknown webhook provider "${webhook.provider}"${didYouMean(webhook.provider, WEBHOOK_PROVIDERS)}`,
    );
  } else if (webhook.provider === WEBHOOK_PROVIDER_WITHOUT_SECRET) {
    if (webhook.secret !== undefined) {
      add(
        doc,
        at('webhook_verification', 'secret'),
        `the ${WEBHOOK_PROVIDER_WITHOUT_SECRET} provider takes no secret`,
      );
    }
  } else if (webhook.secret === undefined || webhook.secret === '') {
    add(doc, at('webhook_verification'), `provider "${webhook.provider}" requires a secret`);
  }
}

/** Header names are case-insensitive: a second spelling of one name is a duplicate. */
function checkHeaderNames(
  doc: number,
  added: Readonly<Record<string, unknown>>,
  path: FieldPath,
  add: Add,
): void {
  const names = Object.keys(added);
  if (names.length < 2) return; // nothing can repeat
  const seen = new Set<string>();
  for (const name of names) {
    const key = name.toLowerCase();
    if (seen.has(key)) {
      add(
        doc,
        [...path, name],
        `duplicate header "${name}" (header names are case-insensitive)`,
        'key',
      );
    }
    seen.add(key);
  }
}

function checkOAuth(
  doc: number,
  oauth: z.output<typeof OAuthSchema>,
  at: (...rest: FieldPath) => FieldPath,
  add: Add,
): void {
  const set = OAUTH_PROVIDERS.filter((p) => oauth.provider[p] !== undefined);
  if (set.length !== 1) {
    add(
      doc,
      at('oauth', 'provider'),
      set.length === 0
        ? `exactly one provider must be set (one of ${OAUTH_PROVIDERS.join(', ')})`
        : `exactly one provider must be set, got ${set.join(' and ')}`,
    );
  }
  for (const name of set) {
    const p = oauth.provider[name];
    if (p === undefined) continue;
    const base = at('oauth', 'provider', name);
    const hasId = p.client_id !== undefined;
    const hasSecret = p.client_secret !== undefined;
    if (hasId && !hasSecret) {
      add(doc, [...base, 'client_id'], 'client_secret is required when client_id is set');
    } else if (hasSecret && !hasId) {
      add(doc, [...base, 'client_secret'], 'client_id is required when client_secret is set');
    }
    if (p.scopes !== undefined && !(hasId && hasSecret)) {
      add(
        doc,
        [...base, 'scopes'],
        'scopes need your own OAuth application: set client_id and client_secret (the managed application takes no scopes)',
      );
    }
  }
}
