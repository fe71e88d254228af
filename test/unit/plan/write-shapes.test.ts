/**
 * One write shape, proved at compile time. Each module's request body is written down three
 * times on purpose: the manifest schema (what users may write, with friendly errors), the
 * client's write schema (what edgesync sends, strict), the server's schema (what the service
 * accepts, with its own error codes and defaults). These type-level assertions fail
 * `npm run typecheck` when the three drift: same module names, same fields per module, and
 * every value the manifest produces is a value the client sends and the server accepts.
 * The planner's bodies are typed by the client's write shapes (src/plan/operations.ts).
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type {
  BotUserCreate,
  HttpsEdgeWrite,
  MODULE_WRITE_SCHEMAS,
  RouteCreate,
  TlsEdgeWrite,
} from '../../../src/api/schemas.js';
import type {
  HTTPS_EDGE_MODULES,
  ROUTE_MODULES,
  TLS_EDGE_MODULES,
} from '../../../src/hosted/modules/index.js';
import type {
  BotUserManifest,
  HttpsEdgeManifest,
  RouteManifest,
  TlsEdgeManifest,
} from '../../../src/manifest/schema.js';
import type {
  botUserCreateSchema,
  HTTPS_EDGE_MODULE_SCHEMAS,
  httpsEdgeCreateSchema,
  ROUTE_MODULE_SCHEMAS,
  routeCreateSchema,
  TLS_EDGE_MODULE_SCHEMAS,
  tlsEdgeCreateSchema,
} from '../../../src/server/schemas.js';

type ClientModules<K extends keyof typeof MODULE_WRITE_SCHEMAS> = {
  [M in keyof (typeof MODULE_WRITE_SCHEMAS)[K]]: z.input<
    (typeof MODULE_WRITE_SCHEMAS)[K][M] & z.ZodType
  >;
};
type ServerModules<S> = { [M in keyof S]: z.input<S[M] & z.ZodType> };
type ManifestModules<R, N extends keyof R> = { [M in N]-?: Exclude<R[M], undefined> };

/** Every field of `A` is one of `B` and the other way round, at the top and one level down. */
type SameFields<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? {
        [K in keyof A & keyof B]: [keyof NonNullable<A[K]>] extends [keyof NonNullable<B[K]>]
          ? [keyof NonNullable<B[K]>] extends [keyof NonNullable<A[K]>]
            ? true
            : K
          : K;
      }[keyof A & keyof B]
    : keyof B
  : keyof A;

describe('write shapes', () => {
  it('name the same modules as the spec, in the manifest, the client and the server', () => {
    expectTypeOf<keyof ClientModules<'tls_edge'>>().toEqualTypeOf<
      (typeof TLS_EDGE_MODULES)[number]
    >();
    expectTypeOf<keyof ClientModules<'https_edge'>>().toEqualTypeOf<
      (typeof HTTPS_EDGE_MODULES)[number]
    >();
    expectTypeOf<keyof ClientModules<'route'>>().toEqualTypeOf<(typeof ROUTE_MODULES)[number]>();
    expectTypeOf<keyof typeof TLS_EDGE_MODULE_SCHEMAS>().toEqualTypeOf<
      (typeof TLS_EDGE_MODULES)[number]
    >();
    expectTypeOf<keyof typeof HTTPS_EDGE_MODULE_SCHEMAS>().toEqualTypeOf<
      (typeof HTTPS_EDGE_MODULES)[number]
    >();
    expectTypeOf<keyof typeof ROUTE_MODULE_SCHEMAS>().toEqualTypeOf<
      (typeof ROUTE_MODULES)[number]
    >();
  });

  it('give every module the same fields in the three places', () => {
    type Tls = ManifestModules<TlsEdgeManifest, (typeof TLS_EDGE_MODULES)[number]>;
    type Https = ManifestModules<HttpsEdgeManifest, (typeof HTTPS_EDGE_MODULES)[number]>;
    type Route = ManifestModules<RouteManifest, (typeof ROUTE_MODULES)[number]>;
    expectTypeOf<SameFields<Tls, ClientModules<'tls_edge'>>>().toEqualTypeOf<true>();
    expectTypeOf<SameFields<Https, ClientModules<'https_edge'>>>().toEqualTypeOf<true>();
    expectTypeOf<SameFields<Route, ClientModules<'route'>>>().toEqualTypeOf<true>();
    expectTypeOf<
      SameFields<ClientModules<'tls_edge'>, ServerModules<typeof TLS_EDGE_MODULE_SCHEMAS>>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      SameFields<ClientModules<'https_edge'>, ServerModules<typeof HTTPS_EDGE_MODULE_SCHEMAS>>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      SameFields<ClientModules<'route'>, ServerModules<typeof ROUTE_MODULE_SCHEMAS>>
    >().toEqualTypeOf<true>();
  });

  it('accept what the manifest produces, in the client and in the server', () => {
    type Tls = ManifestModules<TlsEdgeManifest, (typeof TLS_EDGE_MODULES)[number]>;
    type Route = ManifestModules<RouteManifest, (typeof ROUTE_MODULES)[number]>;
    expectTypeOf<Tls>().toExtend<ClientModules<'tls_edge'>>();
    expectTypeOf<Route>().toExtend<ClientModules<'route'>>();
    expectTypeOf<ClientModules<'tls_edge'>>().toExtend<
      ServerModules<typeof TLS_EDGE_MODULE_SCHEMAS>
    >();
    expectTypeOf<ClientModules<'https_edge'>>().toExtend<
      ServerModules<typeof HTTPS_EDGE_MODULE_SCHEMAS>
    >();
    expectTypeOf<ClientModules<'route'>>().toExtend<ServerModules<typeof ROUTE_MODULE_SCHEMAS>>();
    expectTypeOf<TlsEdgeWrite>().toExtend<z.input<typeof tlsEdgeCreateSchema>>();
    expectTypeOf<HttpsEdgeWrite>().toExtend<z.input<typeof httpsEdgeCreateSchema>>();
    expectTypeOf<RouteCreate>().toExtend<z.input<typeof routeCreateSchema>>();
    expectTypeOf<BotUserCreate>().toExtend<z.input<typeof botUserCreateSchema>>();
    expectTypeOf<Pick<BotUserManifest, 'name' | 'active'>>().toExtend<BotUserCreate>();
  });
});
