/**
 * The bot user operations: create, get, list, update and delete. Bot users have no modules and
 * no cross-resource rules; only the body ID must match the path.
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

export function botUserHandlers({ store, render, ids, now }: HandlerDeps) {
  return {
    createBotUser(call: Call): Reply {
      const b = parseBody(botUserCreateSchema, call.body);
      const rec: BotUserRec = {
        id: ids.next(ID_PREFIX.botUser),
        created_at: rfc3339Seconds(now()),
        name: b.name,
        active: b.active ?? true,
      };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(201, render.botUser(rec), durable);
    },
    getBotUser: (call: Call): Reply => json(200, render.botUser(botUser(call))),
    listBotUsers: (call: Call): Reply =>
      list(render, call, call.account.bots, 'bot_users', '/bot_users', (r) => render.botUser(r)),
    updateBotUser(call: Call): Reply {
      const bot = botUser(call);
      const b = parseBody(botUserUpdateSchema, call.body);
      checkBodyId(b.id, bot.id, 'id');
      const rec: BotUserRec = { ...bot, name: b.name ?? bot.name, active: b.active ?? bot.active };
      const durable = store.commit({ t: 'put', k: 'bot', a: call.accountId, r: rec });
      return json(200, render.botUser(rec), durable);
    },
    deleteBotUser(call: Call): Reply {
      const bot = botUser(call);
      return noContent(store.commit({ t: 'del', k: 'bot', a: call.accountId, id: bot.id }));
    },
  };
}
