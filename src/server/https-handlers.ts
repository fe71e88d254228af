/**
 * The HTTPS edge operations: create, get, list, update, delete and the module sub-resources.
 * An edge's routes live in the edge record but are written through route-handlers.ts; an edge
 * update keeps them, and its answer shows the edge as the store now holds it.
 */
import type { z } from 'zod';
import { ID_PREFIX } from '../hosted/edge-api.js';
import { HTTPS_EDGE_MODULES } from '../hosted/modules/index.js';
import {
  type Call,
  checkBodyId,
  checkHostports,
  type HandlerDeps,
  httpsEdge,
  json,
  list,
  moduleBody,
  moduleReply,
  newEdgeFields,
  noContent,
  type Reply,
  updatedEdgeFields,
} from './handler-common.js';
import { type HttpsEdgeRec, rfc3339Seconds } from './model.js';
import {
  HTTPS_EDGE_MODULE_SCHEMAS,
  type HttpsEdgeModules,
  httpsEdgeCreateSchema,
  httpsEdgeUpdateSchema,
} from './schemas.js';
import type { AccountState } from './store.js';
import { parseBody } from './validate.js';

/** The edge as the store now holds it (an edge put keeps its routes). */
function current(account: AccountState, id: string): HttpsEdgeRec {
  return account.https.get(id) as HttpsEdgeRec;
}

export function httpsEdgeHandlers({ store, render, ids, now }: HandlerDeps) {
  return {
    createHttpsEdge(call: Call): Reply {
      const b = parseBody(httpsEdgeCreateSchema, call.body);
      checkHostports(call.account, b.hostports ?? []);
      const fields = newEdgeFields(
        ids.next(ID_PREFIX.httpsEdge),
        rfc3339Seconds(now()),
        b,
        HTTPS_EDGE_MODULES,
      );
      const rec: HttpsEdgeRec = {
        ...fields,
        modules: fields.modules as HttpsEdgeModules,
        routes: [],
      };
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(201, render.httpsEdge(rec), durable);
    },
    getHttpsEdge: (call: Call): Reply => json(200, render.httpsEdge(httpsEdge(call))),
    listHttpsEdges: (call: Call): Reply =>
      list(render, call, call.account.https, 'https_edges', '/edges/https', (r) =>
        render.httpsEdge(r),
      ),
    updateHttpsEdge(call: Call): Reply {
      const edge = httpsEdge(call);
      const b = parseBody(httpsEdgeUpdateSchema, call.body);
      checkBodyId(b.id, edge.id, 'id');
      if (b.hostports !== undefined) checkHostports(call.account, b.hostports, edge.id);
      const rec = updatedEdgeFields(edge, b, HTTPS_EDGE_MODULES);
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(200, render.httpsEdge(current(call.account, rec.id)), durable);
    },
    deleteHttpsEdge(call: Call): Reply {
      const edge = httpsEdge(call);
      return noContent(store.commit({ t: 'del', k: 'https', a: call.accountId, id: edge.id }));
    },
    getHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      return moduleReply(render, call, edge.modules, edge.id);
    },
    putHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      const name = call.module as keyof typeof HTTPS_EDGE_MODULE_SCHEMAS;
      const value = parseBody(
        HTTPS_EDGE_MODULE_SCHEMAS[name] as z.ZodType,
        moduleBody(call.body, { id: edge.id }),
      );
      const rec: HttpsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: value } };
      const durable = store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec });
      return json(200, render.module(name, rec.modules, rec.id), durable);
    },
    deleteHttpsEdgeModule(call: Call): Reply {
      const edge = httpsEdge(call);
      const name = call.module as keyof HttpsEdgeModules;
      if (edge.modules[name] == null) return noContent();
      const rec: HttpsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: null } };
      return noContent(store.commit({ t: 'put', k: 'https', a: call.accountId, r: rec }));
    },
  };
}
