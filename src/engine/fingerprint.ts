/**
 * Plan fingerprints: keyed hashes of what a plan was made from, so a saved plan (`plan --out`)
 * is refused as stale when the account or the manifests moved since.
 *
 * Fingerprints are SHA-256 over the JSON of each record in a fixed order (records sorted by ID;
 * keys sorted at every depth): `live` over the whole snapshot, `manifests` over the owner id and
 * the desired set (secret values included in the hash input, so a changed secret makes a saved
 * plan stale; never in any output).
 */
import { createHmac, type Hmac } from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { LiveSnapshot } from '../api/observe.js';
import { compareCodeUnits } from '../compare.js';
import { formatPath } from '../manifest/paths.js';
import type { DesiredSet, Located } from '../manifest/schema.js';

// Keyed hashes (HMAC-SHA256): the manifests fingerprint covers resolved secret values, and an
// unkeyed hash of them in a published plan (a pull-request comment, a CI artifact) would let
// anyone test guesses offline. The key is derived from the API key, which `plan` and `apply`
// both hold, so a saved plan keeps working across runs with the same key and is stale with
// another (a plan made for one account is no plan for another).

const FINGERPRINT_PREFIX = 'hmac-sha256:';

/** The fingerprint key: never the API key itself, so a leaked digest says nothing about it. */
export function fingerprintHmacKey(apiKey: string): Buffer {
  return createHmac('sha256', apiKey).update('edgesync plan fingerprint v1').digest();
}

function byId<T extends { readonly id: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => compareCodeUnits(a.id, b.id));
}

/**
 * The canonical form hashed: JSON with every object's keys sorted, at every depth, so a
 * fingerprint depends on the data and never on the order a parser, a schema or the API put its
 * keys in.
 */
const canonicalJson = configure({ deterministic: true });

/** Hashes a list item by item, so a 10,000-edge snapshot never becomes one giant string. */
function hashList(hash: Hmac, label: string, items: readonly unknown[]): void {
  hash.update(`${label}:${items.length}\n`);
  for (const item of items) hash.update(`${canonicalJson(item)}\n`);
}

export function fingerprintLive(
  key: Buffer,
  snapshot: {
    readonly tlsEdges: LiveSnapshot['tlsEdges'];
    readonly httpsEdges: LiveSnapshot['httpsEdges'];
    readonly botUsers: LiveSnapshot['botUsers'];
    readonly cloudEndpoints?: LiveSnapshot['cloudEndpoints'] | undefined;
  },
): string {
  const hash = createHmac('sha256', key);
  hashList(hash, 'tls_edges', byId(snapshot.tlsEdges));
  hashList(
    hash,
    'https_edges',
    byId(snapshot.httpsEdges).map((e) => ({ ...e, routes: byId(e.routes) })),
  );
  hashList(hash, 'bot_users', byId(snapshot.botUsers));
  // Only when there are any: an account without endpoints keeps the fingerprint it had.
  const endpoints = snapshot.cloudEndpoints ?? [];
  if (endpoints.length > 0) hashList(hash, 'endpoints', byId(endpoints));
  return `${FINGERPRINT_PREFIX}${hash.digest('hex')}`;
}

export function fingerprintManifests(key: Buffer, owner: string, desired: DesiredSet): string {
  const hash = createHmac('sha256', key);
  hash.update(`owner:${canonicalJson(owner)}\n`);
  hashList(hash, 'tls_edges', desired.tlsEdges.map(hashed));
  hashList(
    hash,
    'https_edges',
    desired.httpsEdges.map((e) => ({ ...hashed(e), routes: e.routes.map(hashed) })),
  );
  hashList(hash, 'bot_users', desired.botUsers.map(hashed));
  if (desired.cloudEndpoints.length > 0) {
    hashList(hash, 'cloud_endpoints', desired.cloudEndpoints.map(hashed));
  }
  // What excluded files declare decides what is left alone: a saved plan is stale once it moves.
  if (desired.excluded !== undefined) {
    hashList(hash, 'excluded', [...desired.excluded.declared]);
    hashList(hash, 'excluded_unreadable', [...desired.excluded.unreadable]);
  }
  return `${FINGERPRINT_PREFIX}${hash.digest('hex')}`;
}

/**
 * A resource as its fingerprint has always hashed it: its sensitive paths in their written form
 * (`a.b[0].c`, sorted), so a plan saved by an earlier version with the same manifests and key
 * is not taken for stale.
 */
function hashed<T extends Located>(resource: T): Omit<T, 'sensitive'> & { sensitive: unknown[] } {
  if (resource.sensitive.length === 0) return resource;
  return { ...resource, sensitive: resource.sensitive.map(formatPath).sort(compareCodeUnits) };
}
