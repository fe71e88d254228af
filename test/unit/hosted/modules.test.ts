/**
 * The module definitions (src/hosted/modules/) and what is derived from them: the three schemas
 * of a field come from its one entry, the defaults table and the planner's rules read the
 * definitions, and the places that still state a module fact (the masking rules, the circuit
 * breaker's service rule) agree with them.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  httpsEdgeSchema,
  httpsEdgeWriteSchema,
  httpsRouteSchema,
  MODULE_WRITE_SCHEMAS,
  routeCreateSchema,
  tlsEdgeSchema,
  tlsEdgeWriteSchema,
} from '../../../src/api/schemas.js';
import { MODULE_DEFAULTS } from '../../../src/hosted/defaults.js';
import { ERROR_CODE } from '../../../src/hosted/edge-api.js';
import { defineModule, enabledField } from '../../../src/hosted/modules/field.js';
import {
  checkCircuitBreaker,
  circuitBreaker,
  type Field,
  HTTPS_EDGE_MODULES,
  MODULE_OWNERS,
  MODULES,
  MODULES_BY_NAME,
  ROUTE_MODULES,
  TLS_EDGE_MODULES,
} from '../../../src/hosted/modules/index.js';
import { uint32Field } from '../../../src/hosted/modules/session.js';
import { manifestJsonSchema } from '../../../src/manifest/jsonschema.js';
import { HttpsEdgeSchema, RouteSchema, TlsEdgeSchema } from '../../../src/manifest/schema.js';
import { isSecretField } from '../../../src/manifest/secrets.js';
import { canonicalModule, liveModuleToWrite } from '../../../src/plan/normalize.js';
import {
  HTTPS_EDGE_MODULE_SCHEMAS,
  ROUTE_MODULE_SCHEMAS,
  TLS_EDGE_MODULE_SCHEMAS,
} from '../../../src/server/schemas.js';

/** Every field path of a definition's fields, nested ones included. */
function* fieldPaths(
  fields: Readonly<Record<string, Field>>,
  path: readonly string[] = [],
): Generator<[readonly string[], Field]> {
  for (const [name, f] of Object.entries(fields)) {
    yield [[...path, name], f];
    if (f.nested !== undefined) yield* fieldPaths(f.nested, [...path, name]);
  }
}

describe('a module defined once', () => {
  it('a field added to a definition reaches the manifest, write and read schemas, and the defaults', () => {
    const def = defineModule({
      description: 'A module for this test.',
      fields: { enabled: enabledField(), ttl: uint32Field('Seconds to keep it.') },
      example: {},
    });
    expect(def.manifest.safeParse({ ttl: 5 }).data).toEqual({ enabled: true, ttl: 5 });
    expect(def.manifest.safeParse({ ttl: -1 }).error?.issues[0]?.message).toBe(
      'must be at least 0',
    );
    expect(def.write.safeParse({ ttl: 5 }).success).toBe(true);
    expect(def.write.safeParse({ ttl: 5, other: 1 }).success).toBe(false);
    expect(def.read.parse({ enabled: true, ttl: null })).toEqual({ enabled: true, ttl: null });
    const json = z.toJSONSchema(def.manifest, { io: 'input' }) as {
      properties: Record<string, { description?: string }>;
    };
    expect(json.properties.ttl?.description).toBe('Seconds to keep it.');
  });

  it('the client write schemas are the definitions’ own', () => {
    for (const [owner, modules] of Object.entries(MODULES)) {
      const writes = MODULE_WRITE_SCHEMAS[owner as keyof typeof MODULES] as Record<string, unknown>;
      for (const [name, def] of Object.entries(modules)) expect(writes[name]).toBe(def.write);
    }
  });

  it('the defaults table lists each stated default, the manifest-filled enabled excepted', () => {
    const stated = [...MODULES_BY_NAME].flatMap(([module, def]) =>
      Object.entries(def.fields)
        .filter(([, f]) => f.default !== undefined && f.presence !== 'filled')
        .map(([field, f]) => [module, field, f.default]),
    );
    const table = Object.entries(MODULE_DEFAULTS).flatMap(([module, fields]) =>
      Object.entries(fields).map(([field, value]) => [module, field, value]),
    );
    expect(table).toEqual(stated);
    expect(table.length).toBeGreaterThan(15);
  });

  it('every field of every module has a description in the JSON Schema', () => {
    const text = JSON.stringify(manifestJsonSchema());
    for (const def of MODULES_BY_NAME.values()) {
      for (const [path, f] of fieldPaths(def.fields)) {
        expect(text, path.join('.')).toContain(JSON.stringify(f.description));
      }
    }
  });

  it('the sensitive fields are exactly those the masking treats as secrets', () => {
    for (const [module, def] of MODULES_BY_NAME) {
      for (const [path, f] of fieldPaths(def.fields)) {
        expect(isSecretField([module, ...path]), `${module}.${path.join('.')}`).toBe(
          f.sensitive === true,
        );
      }
    }
  });

  it('the circuit breaker rule is read from the definition: each size it needs, with its code', () => {
    const required = Object.entries(circuitBreaker.fields as Readonly<Record<string, Field>>)
      .filter(([, f]) => f.serviceRequired !== undefined)
      .map(([name, f]) => [name, f.serviceRequired]);
    expect(checkCircuitBreaker({}).map((v) => [v.field, v.code])).toEqual(required);
    expect(required).toEqual([
      ['tripped_duration', ERROR_CODE.circuitBreakerTrippedDuration],
      ['rolling_window', ERROR_CODE.circuitBreakerRollingWindow],
      ['num_buckets', ERROR_CODE.circuitBreakerBuckets],
      ['volume_threshold', ERROR_CODE.circuitBreakerBuckets],
    ]);
    expect(checkCircuitBreaker({ ...circuitBreaker.example, rolling_window: 0 })).toEqual([
      expect.objectContaining({
        field: 'rolling_window',
        code: ERROR_CODE.circuitBreakerRollingWindow,
      }),
    ]);
    expect(checkCircuitBreaker(circuitBreaker.example)).toEqual([]);
  });

  it('one table says which owners carry each module; every list of them is read from it', () => {
    const carried = (owner: string) =>
      Object.entries(MODULE_OWNERS)
        .filter(([, row]) => owner in row)
        .map(([name]) => name);
    expect(TLS_EDGE_MODULES).toEqual(carried('tls_edge'));
    expect(HTTPS_EDGE_MODULES).toEqual(carried('https_edge'));
    expect(ROUTE_MODULES).toEqual(carried('route'));
    expect([...MODULES_BY_NAME.keys()]).toEqual(Object.keys(MODULE_OWNERS));
    expect(MODULES.https_edge.tls_termination).toBe(MODULE_OWNERS.tls_termination.https_edge);
    const moduleKeys = (shape: Readonly<Record<string, unknown>>) =>
      Object.keys(shape).filter((k) => MODULES_BY_NAME.has(k));
    const owners = [
      ['tls_edge', TlsEdgeSchema, tlsEdgeWriteSchema, tlsEdgeSchema, TLS_EDGE_MODULE_SCHEMAS],
      [
        'https_edge',
        HttpsEdgeSchema,
        httpsEdgeWriteSchema,
        httpsEdgeSchema,
        HTTPS_EDGE_MODULE_SCHEMAS,
      ],
      ['route', RouteSchema, routeCreateSchema, httpsRouteSchema, ROUTE_MODULE_SCHEMAS],
    ] as const;
    for (const [owner, manifest, write, read, server] of owners) {
      const names = carried(owner);
      expect(moduleKeys(manifest.shape), `manifest ${owner}`).toEqual(names);
      expect(moduleKeys(write.shape), `write ${owner}`).toEqual(names);
      expect(moduleKeys(read.shape), `read ${owner}`).toEqual(names);
      expect(Object.keys(server), `server ${owner}`).toEqual(names);
      for (const name of names) {
        const def = (MODULE_OWNERS as Record<string, Record<string, { manifest: unknown }>>)[
          name
        ]?.[owner];
        expect((manifest.shape as unknown as Record<string, z.ZodOptional>)[name]?.unwrap()).toBe(
          def?.manifest,
        );
      }
    }
  });

  it('normalisation follows the definitions: Refs to IDs, server-made fields dropped, case', () => {
    expect(liveModuleToWrite('backend', { enabled: true, backend: { id: 'bkdhr_1' } })).toEqual({
      enabled: true,
      backend_id: 'bkdhr_1',
    });
    expect(
      liveModuleToWrite('ip_restriction', { enabled: true, ip_policies: [{ id: 'ipp_1' }] }),
    ).toEqual({ enabled: true, ip_policy_ids: ['ipp_1'] });
    expect(
      liveModuleToWrite('saml', { enabled: true, idp_metadata: '<x/>', entity_id: 'e' }),
    ).toEqual({ enabled: true, idp_metadata: '<x/>' });
    expect(canonicalModule('webhook_verification', { provider: 'GitHub' })).toEqual({
      provider: 'github',
    });
    expect(canonicalModule('response_headers', { add: { 'X-A': 'V' }, remove: ['X-B'] })).toEqual({
      add: { 'x-a': 'V' },
      remove: ['x-b'],
    });
    expect(canonicalModule('traffic_policy', { value: 'AbC' })).toEqual({ value: 'AbC' });
  });
});
