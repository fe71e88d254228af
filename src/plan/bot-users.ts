/**
 * Bot users, matched by name. They carry no metadata, so namesakes (a person's, or two racing
 * applies') cannot be told apart: the plan warns, gives every one of them the desired state,
 * and addresses all but the oldest by ID (`bot_user.ci#bot_2`).
 *
 * One exception: a namesake this process provably created itself (`ownBotUsers`: its own 201
 * answer to a create whose earlier attempt was lost, and which then landed late) is deleted,
 * and the other kept. The one kept is the one that cannot be proven edgesync's: deleting it
 * could delete a person's.
 */
import type { BotUser } from '../api/schemas.js';
import type { BotUserManifest } from '../manifest/schema.js';
import type { PlanContext } from './context.js';
import { createBotUser, deleteBotUser, updateBotUser } from './operations.js';
import { survivorFirst } from './survivor.js';

/** `bot_user.ci`: a bot user's address (its name: bot users have no owner mark). */
export function botUserAddress(name: string): string {
  return `bot_user.${name}`;
}

export function planBotUsers(
  ctx: PlanContext,
  desired: readonly BotUserManifest[],
  live: readonly BotUser[],
): void {
  const byName = new Map<string, BotUser[]>();
  for (const b of live) {
    const list = byName.get(b.name);
    if (list === undefined) byName.set(b.name, [b]);
    else list.push(b);
  }
  for (const list of byName.values()) list.sort(survivorFirst);
  for (const d of desired) {
    if (d.suspend === true) {
      const found = byName.get(d.name) ?? [];
      ctx.blocked.push({
        address: botUserAddress(d.name),
        kind: 'suspended',
        reason:
          found.length === 0
            ? 'suspend: true: not created while suspended'
            : `${found.map((b) => b.id).join(', ')}: suspend: true: left exactly as it is live`,
      });
      continue;
    }
    const found = byName.get(d.name) ?? [];
    const own = d.ensure === 'absent' ? [] : provenDuplicates(ctx, found);
    for (const b of own) planOwnDuplicate(ctx, d, b, found);
    planBotUser(
      ctx,
      d,
      found.filter((b) => !own.includes(b)),
    );
  }
}

/** Namesakes this process provably created, all deletable while one other namesake stays. */
function provenDuplicates(ctx: PlanContext, found: readonly BotUser[]): BotUser[] {
  if (found.length < 2) return [];
  const own = found.filter((b) => ctx.ownBotUsers.has(b.id));
  // All of them ours: the oldest stays, like any survivor among look-alikes.
  return own.length === found.length ? own.slice(1) : own;
}

function planOwnDuplicate(
  ctx: PlanContext,
  d: BotUserManifest,
  b: BotUser,
  found: readonly BotUser[],
): void {
  const address = `${botUserAddress(d.name)}#${b.id}`;
  const others = found.filter((o) => o !== b).map((o) => o.id);
  ctx.changes.push({
    kind: 'bot_user',
    name: d.name,
    source: d.source,
    modules: [],
    address,
    root: address,
    action: 'delete',
    reason: `duplicate of ${others.join(', ')}: created by this process when an earlier create's answer was lost and that create landed late`,
    id: b.id,
    fields: [{ path: 'active', before: b.active, sensitive: false }],
    operations: [deleteBotUser(b.id, `delete duplicate bot user ${d.name}`)],
  });
}

function planBotUser(ctx: PlanContext, d: BotUserManifest, found: readonly BotUser[]): void {
  const address = botUserAddress(d.name);
  if (found.length > 1) {
    ctx.warnings.push(
      `${found.length} bot users named ${JSON.stringify(d.name)} (${found.map((b) => b.id).join(', ')}): ` +
        (d.ensure === 'absent'
          ? 'ensure: absent deletes all of them'
          : `active: ${d.active} is applied to every one; delete the extra ones by hand`),
    );
  }
  const base = { kind: 'bot_user' as const, name: d.name, source: d.source, modules: [] };
  // The oldest keeps the plain address; namesakes are addressed by ID.
  const addressOf = (b: BotUser, i: number) => (i === 0 ? address : `${address}#${b.id}`);
  if (d.ensure === 'absent') {
    found.forEach((b, i) => {
      const at = addressOf(b, i);
      ctx.changes.push({
        ...base,
        address: at,
        root: at,
        action: 'delete',
        reason: 'ensure: absent',
        id: b.id,
        fields: [{ path: 'active', before: b.active, sensitive: false }],
        operations: [deleteBotUser(b.id, `delete bot user ${d.name}`)],
      });
    });
    return;
  }
  if (found.length === 0) {
    ctx.changes.push({
      ...base,
      address,
      root: address,
      action: 'create',
      reason: 'not found live',
      fields: [
        { path: 'name', after: d.name, sensitive: false },
        { path: 'active', after: d.active, sensitive: false },
      ],
      operations: [
        createBotUser({ name: d.name, active: d.active }, `create bot user ${d.name}`, address),
      ],
    });
    return;
  }
  found.forEach((current, i) => {
    const at = addressOf(current, i);
    const common = { ...base, address: at, root: at, id: current.id };
    if (current.active !== d.active) {
      ctx.changes.push({
        ...common,
        action: 'update',
        reason: i === 0 ? 'changed active' : 'changed active (a namesake)',
        fields: [{ path: 'active', before: current.active, after: d.active, sensitive: false }],
        operations: [updateBotUser(current.id, { active: d.active }, `update bot user ${d.name}`)],
      });
    } else {
      ctx.changes.push({
        ...common,
        action: 'noop',
        reason: 'up to date',
        fields: [],
        operations: [],
      });
    }
  });
}
