/**
 * Service users (account-resources.md section 5): the successor name of bot users, the same
 * records (`bot_` IDs; `/bot_users` lists them too) under `/service_users`, with their own URIs
 * and list envelope. The operations are the bot users' (bot-handlers.ts), rendered here; a
 * PATCH with no field is a 400 on this API, as on every account resource.
 */

import { checkNotEmpty, lookup } from './account-common.js';
import { userHandlers } from './bot-handlers.js';
import type { Call, HandlerDeps, Reply } from './handler-common.js';
import type { BotUserRec } from './model.js';

export function serviceUserHandlers(deps: HandlerDeps) {
  const cache = new WeakMap<BotUserRec, string>();
  const one = (rec: BotUserRec): string => {
    let out = cache.get(rec);
    if (out === undefined) {
      out = JSON.stringify({
        id: rec.id,
        uri: `${deps.render.base}/service_users/${rec.id}`,
        name: rec.name,
        active: rec.active,
        created_at: rec.created_at,
      });
      cache.set(rec, out);
    }
    return out;
  };
  const users = userHandlers(deps, { one, key: 'service_users', path: '/service_users' });
  /** A malformed path ID is a 400 here (the bot users API answers it 404). */
  const checked = (call: Call) => lookup(call, 'service user', (id) => call.account.bots.get(id));
  return {
    createServiceUser: users.create,
    getServiceUser: (call: Call): Reply => {
      checked(call);
      return users.get(call);
    },
    listServiceUsers: users.list,
    updateServiceUser(call: Call): Reply {
      checked(call);
      if (typeof call.body === 'object' && call.body !== null) checkNotEmpty(call.body);
      return users.update(call);
    },
    deleteServiceUser(call: Call): Reply {
      checked(call);
      return users.delete(call);
    },
  };
}
