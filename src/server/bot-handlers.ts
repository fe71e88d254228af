/**
 * The bot user operations: create, get, list, update and delete. Bot users have no modules and
 * no cross-resource rules; only the body ID must match the path. Service users are the same
 * records under their successor name (service-user-handlers.ts), hence `userHandlers`, the
 * operations over a read shape and a list envelope of the caller's choosing.
 */
import { ID_PREFIX } from '../hosted/edge-api.js';
import {
  botUser,
  type Call,
  checkBodyId,
  type HandlerDeps,
  json,
  list,
  noContent,
  type Reply,
} from './handler-common.js';
import { type BotUserRec, rfc3339Seconds } from './model.js';
import { botUserCreateSchema, botUserUpdateSchema } from './schemas.js';
import { parseBody } from './validate.js';

/** How one API shows the records: each record's JSON, the list's key and its path. */
interface UserView {
  readonly one: (rec: BotUserRec) => string;
  readonly key: string;
  readonly path: string;
}

export function userHandlers({ store, render, ids, now }: HandlerDeps, view: UserView) {
  const { one } = view;
  return {
    create(call: Call): Reply {
      const b = parseBody(botUserCreateSchema, call.body);
      const rec: BotUserRec = {
        id: ids.next(ID_PREFIX.botUser),
        created_at: rfc3339Seconds(now()),
        name: b.name,
        active: b.active ?? true,
      };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(201, one(rec), durable);
    },
    get: (call: Call): Reply => json(200, one(botUser(call))),
    list: (call: Call): Reply => list(render, call, call.account.bots, view.key, view.path, one),
    update(call: Call): Reply {
      const bot = botUser(call);
      const b = parseBody(botUserUpdateSchema, call.body);
      checkBodyId(b.id, bot.id, 'id');
      const rec: BotUserRec = { ...bot, name: b.name ?? bot.name, active: b.active ?? bot.active };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(200, one(rec), durable);
    },
    delete(call: Call): Reply {
      const bot = botUser(call);
      return noContent(store.commit({ t: 'del', k: 'bot', a: call.accountId, id: bot.id }));
    },
  };
}

export function botUserHandlers(deps: HandlerDeps) {
  const users = userHandlers(deps, {
    one: (r) => deps.render.botUser(r),
    key: 'bot_users',
    path: '/bot_users',
  });
  return {
    createBotUser: users.create,
    getBotUser: users.get,
    listBotUsers: users.list,
    updateBotUser: users.update,
    deleteBotUser: users.delete,
  };
}
