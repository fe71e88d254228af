/**
 * The TLS edge operations: create, get, list, update, delete and the module sub-resources.
 * Create, PATCH and a module PUT each re-check that `mutual_tls` has TLS terminated at the edge,
 * whichever way the modules changed.
 */
import type { z } from 'zod';
import { checkMutualTlsTermination, ID_PREFIX } from '../hosted/edge-api.js';
import { TLS_EDGE_MODULES } from '../hosted/modules/index.js';
import {
  type Call,
  checkBodyId,
  checkHostports,
  type HandlerDeps,
  json,
  list,
  moduleBody,
  moduleReply,
  newEdgeFields,
  noContent,
  type Reply,
  refuse,
  tlsEdge,
  updatedEdgeFields,
} from './handler-common.js';
import { rfc3339Seconds, type TlsEdgeRec } from './model.js';
import {
  TLS_EDGE_MODULE_SCHEMAS,
  type TlsEdgeModules,
  tlsEdgeCreateSchema,
  tlsEdgeUpdateSchema,
} from './schemas.js';
import { parseBody } from './validate.js';

/** `mutual_tls` needs TLS terminated at the edge (7062). */
function checkTlsEdgeModules(modules: TlsEdgeModules): void {
  refuse(
    checkMutualTlsTermination(modules.tls_termination?.terminate_at, modules.mutual_tls != null),
  );
}

export function tlsEdgeHandlers({ store, render, ids, now }: HandlerDeps) {
  return {
    createTlsEdge(call: Call): Reply {
      const b = parseBody(tlsEdgeCreateSchema, call.body);
      checkHostports(call.account, b.hostports ?? []);
      const fields = newEdgeFields(
        ids.next(ID_PREFIX.tlsEdge),
        rfc3339Seconds(now()),
        b,
        TLS_EDGE_MODULES,
      );
      const rec: TlsEdgeRec = { ...fields, modules: fields.modules as TlsEdgeModules };
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(201, render.tlsEdge(rec), durable);
    },
    getTlsEdge: (call: Call): Reply => json(200, render.tlsEdge(tlsEdge(call))),
    listTlsEdges: (call: Call): Reply =>
      list(render, call, call.account.tls, 'tls_edges', '/edges/tls', (r) => render.tlsEdge(r)),
    updateTlsEdge(call: Call): Reply {
      const edge = tlsEdge(call);
      const b = parseBody(tlsEdgeUpdateSchema, call.body);
      checkBodyId(b.id, edge.id, 'id');
      if (b.hostports !== undefined) checkHostports(call.account, b.hostports, edge.id);
      const rec = updatedEdgeFields(edge, b, TLS_EDGE_MODULES);
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(200, render.tlsEdge(rec), durable);
    },
    deleteTlsEdge(call: Call): Reply {
      const edge = tlsEdge(call);
      return noContent(store.commit({ t: 'del', k: 'tls', a: call.accountId, id: edge.id }));
    },
    getTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      return moduleReply(render, call, edge.modules, edge.id);
    },
    putTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      const name = call.module as keyof typeof TLS_EDGE_MODULE_SCHEMAS;
      const value = parseBody(
        TLS_EDGE_MODULE_SCHEMAS[name] as z.ZodType,
        moduleBody(call.body, { id: edge.id }),
      );
      const rec: TlsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: value } };
      checkTlsEdgeModules(rec.modules);
      const durable = store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec });
      return json(200, render.module(name, rec.modules, rec.id), durable);
    },
    deleteTlsEdgeModule(call: Call): Reply {
      const edge = tlsEdge(call);
      const name = call.module as keyof TlsEdgeModules;
      if (edge.modules[name] == null) return noContent();
      const rec: TlsEdgeRec = { ...edge, modules: { ...edge.modules, [name]: null } };
      return noContent(store.commit({ t: 'put', k: 'tls', a: call.accountId, r: rec }));
    },
  };
}
