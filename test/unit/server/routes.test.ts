import { describe, expect, it } from 'vitest';
import { API_OPERATIONS, fillTemplate } from '../../../src/api/routes.js';
import { ID_PREFIX } from '../../../src/hosted/edge-api.js';
import { resolve, SERVER_ROUTES, splitPath } from '../../../src/server/routes.js';

/**
 * Routes of the local server no client operation uses (`METHOD template`). None today: every
 * route the server serves is an operation of the client's table.
 */
const SERVER_ONLY: readonly string[] = [];

const resolvePath = (path: string) => {
  const segments = splitPath(path);
  return segments === undefined ? undefined : resolve(segments);
};

/** The server route that answered, by its method table (each route has its own). */
const routeOf = (table: object) => SERVER_ROUTES.find((r) => r.table === table);

describe("the server's router against the client's table of operations", () => {
  it.each(API_OPERATIONS.map((op) => [op.method, op.template, op.name] as const))(
    '%s %s (%s) is routed to a handler with the same method and template',
    (method, template, name) => {
      const resolved = resolvePath(fillTemplate(template, (p) => `${p}_1`));
      expect(resolved, template).toBeDefined();
      const handler = resolved?.table[method];
      expect(handler, `${method} ${template}`).toBeDefined();
      const route = routeOf(resolved?.table ?? {});
      expect(route?.template.replace('{module}', resolved?.module ?? '{module}')).toBe(template);
      if (resolved?.module === undefined) expect(handler).toBe(name);
      else expect(handler).toMatch(new RegExp(`^${method.toLowerCase()}[A-Za-z]+Module$`));
    },
  );

  it('has no route the table lacks, besides the server-only ones listed', () => {
    const served = SERVER_ROUTES.flatMap((route) =>
      Object.keys(route.table).flatMap((method) =>
        [...(route.modules ?? [undefined])].map(
          (module) => `${method} ${route.template.replace('{module}', module ?? '')}`,
        ),
      ),
    );
    const operations = API_OPERATIONS.map((op) => `${op.method} ${op.template}`);
    expect([...served].sort()).toEqual([...operations, ...SERVER_ONLY].sort());
  });
});

describe("the server's router", () => {
  it.each([
    '/',
    '/edges',
    '/edges/udp',
    '/edges/tls/edgtls_1/routes',
    '/edges/https/edghts_1/backend',
    '/edges/https/edghts_1/routes/edghtsrt_1/nope',
    '/edges/https/edghts_1/routes/edghtsrt_1/oauth/x',
    '/bot_users/bot_1/x',
    '/endpoints/ep_1/x',
    '/reserved_domains/rd_1/x',
    '/reserved_domains/rd_1/certificate/x',
    '/certificate_authorities/ca_1/x',
    '/service_users/bot_1/x',
    '/ip_policies/ipp_1/rules',
    '/ip_policy_rules/ipr_1/x',
    '/vaults/vault_1/x',
    '/vaults/vault_1/secrets/secret_1',
    '/vault_secrets/secret_1/x',
    '/nothing',
  ])('%s is no resource (404)', (path) => {
    expect(resolvePath(path)).toBeUndefined();
  });

  it('answers the IDs with their prefixes, the module, and whether it is a list', () => {
    expect(resolvePath('/edges/https/edghts_1/routes/edghtsrt_2/oauth')).toEqual({
      table: { GET: 'getRouteModule', PUT: 'putRouteModule', DELETE: 'deleteRouteModule' },
      ids: [
        ['edghts_1', ID_PREFIX.httpsEdge],
        ['edghtsrt_2', ID_PREFIX.route],
      ],
      module: 'oauth',
    });
    expect(resolvePath('/edges/https/edghts_1/routes')).toEqual({
      table: { POST: 'createRoute' },
      ids: [['edghts_1', ID_PREFIX.httpsEdge]],
    });
    expect(resolvePath('/endpoints/')).toEqual({
      table: { GET: 'listEndpoints', POST: 'createEndpoint' },
      ids: [],
      list: true,
      filter: true,
    });
    // The account resources: filtered lists, the domain's certificate sub-resources.
    expect(resolvePath('/reserved_domains')).toMatchObject({ list: true, filter: true });
    expect(resolvePath('/certificate_authorities')).toMatchObject({ list: true, filter: true });
    expect(resolvePath('/service_users')).toEqual({
      table: { GET: 'listServiceUsers', POST: 'createServiceUser' },
      ids: [],
      list: true,
    });
    expect(resolvePath('/reserved_domains/rd_1/certificate_management_policy')).toEqual({
      table: { DELETE: 'deleteReservedDomainCertificateManagementPolicy' },
      ids: [['rd_1', 'rd_']],
    });
    expect(resolvePath('/service_users/bot_1')?.ids).toEqual([['bot_1', ID_PREFIX.botUser]]);
    // A vault's secrets: paged, without a filter.
    expect(resolvePath('/vaults/vault_1/secrets')).toEqual({
      table: { GET: 'listVaultSecrets' },
      ids: [['vault_1', 'vault_']],
      list: true,
    });
    expect(resolvePath('/ip_policy_rules')).toEqual({
      table: { GET: 'listIpPolicyRules', POST: 'createIpPolicyRule' },
      ids: [],
      list: true,
      filter: true,
    });
    // An empty ID still routes: its prefix check answers it (400), not a 404.
    expect(resolvePath('/bot_users//')?.ids).toEqual([['', ID_PREFIX.botUser]]);
  });
});
