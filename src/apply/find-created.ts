/**
 * Looking before creating again. When a POST's outcome is unknown (timeout, reset, 5xx), the
 * create may have happened: re-sending it blindly could make a duplicate edge, route or bot user.
 * These lookups find what the lost POST would have created, by the keys the plan relies on:
 * - edges and cloud endpoints: our `edgesync/owner` and `edgesync/name` in the metadata the
 *   POST carried;
 * - routes: the `match` on the parent edge (unique per edge, enforced by the API);
 * - bot users: the name (the planner only creates a bot user no live one carries);
 * - every kind planned generically (src/kinds/): the owner mark the POST's metadata carried,
 *   listed with the list method the kind's definition names.
 * They return the found ID, or undefined when the create provably did not happen as far as a
 * fresh read can tell. A lookup that cannot decide throws: the caller must then not re-send.
 */
import type { ApiClient } from '../api/index.js';
import { FIXED_OPERATIONS } from '../api/routes.js';
import { GENERIC_KINDS, type KindDefinition, type LiveRecord } from '../kinds/index.js';
import { parseStoredMetadata } from '../manifest/metadata.js';
import { survivor } from '../plan/survivor.js';
import type { Target } from '../plan/target.js';
import { InvalidOperationError } from './dispatch.js';

export type LookupClient = Pick<
  ApiClient,
  Extract<keyof ApiClient, `list${string}`> | 'getHttpsEdge'
>;

function field(body: unknown, key: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** The ID of the resource the POST to `target` with `body` created, if it exists now. */
export async function findCreated(
  client: LookupClient,
  target: Target,
  body: unknown,
): Promise<string | undefined> {
  switch (target.kind) {
    case 'edges':
    case 'endpoints': {
      const own = parseStoredMetadata(field(body, 'metadata'));
      const what = target.kind === 'edges' ? `an edge (${target.edge_kind})` : 'an endpoint';
      if (own?.owner === undefined || own.name === undefined) {
        throw new InvalidOperationError(
          `cannot verify the create of ${what} without ownership keys in its metadata`,
        );
      }
      const { items } =
        target.kind === 'endpoints'
          ? await client.listEndpoints()
          : target.edge_kind === 'tls'
            ? await client.listTlsEdges()
            : await client.listHttpsEdges();
      // The planner's survivor (the oldest): if a duplicate ever existed, keep converging on
      // the one the next plan keeps.
      const found = items.filter((record) => {
        const meta = parseStoredMetadata(record.metadata);
        return meta?.owner === own.owner && meta?.name === own.name;
      });
      return survivor(found)?.id;
    }
    case 'routes': {
      const match = field(body, 'match');
      if (match === undefined) {
        throw new InvalidOperationError('cannot verify a route create without its match');
      }
      const edge = await client.getHttpsEdge(target.edge_id);
      return edge.routes.find((r) => r.match === match)?.id;
    }
    case 'bot_users': {
      const name = field(body, 'name');
      if (name === undefined) {
        throw new InvalidOperationError('cannot verify a bot user create without its name');
      }
      const { items } = await client.listBotUsers();
      return survivor(items.filter((u) => u.name === name))?.id;
    }
    default:
      return findGeneric(client, target.kind, body);
  }
}

/** The kind whose create is a POST to a target of this kind, when it is planned generically. */
function genericKindCreatedAt(targetKind: string): KindDefinition | undefined {
  return GENERIC_KINDS.find((k) => {
    const row = FIXED_OPERATIONS.find((op) => op.name === k.api.create);
    return row?.target.kind === targetKind;
  });
}

async function findGeneric(
  client: LookupClient,
  targetKind: string,
  body: unknown,
): Promise<string | undefined> {
  const kind = genericKindCreatedAt(targetKind);
  if (kind === undefined) throw new InvalidOperationError(`no create lookup for a ${targetKind}`);
  const own = parseStoredMetadata(field(body, 'metadata'));
  if (own?.owner === undefined || own.name === undefined) {
    throw new InvalidOperationError(
      `cannot verify the create of a ${kind.kind} without ownership keys in its metadata`,
    );
  }
  const list = (client as unknown as Readonly<Record<string, Lister | undefined>>)[kind.api.list];
  if (list === undefined) throw new InvalidOperationError(`the client cannot list ${kind.kind}`);
  const { items } = await list.call(client);
  const found = items.filter((record) => {
    const meta = parseStoredMetadata(typeof record.metadata === 'string' ? record.metadata : '');
    return meta?.owner === own.owner && meta?.name === own.name;
  });
  return survivor(found)?.id;
}

type Lister = () => Promise<{
  readonly items: readonly (LiveRecord & { readonly created_at: string })[];
}>;
