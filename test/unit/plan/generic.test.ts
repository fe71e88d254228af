/**
 * The generic planner and the plan's dependency graph, on kinds defined here: two flat kinds,
 * `widget` (owned through the metadata mark, pruned) and `gadget` (matched by a natural key,
 * never pruned), a gadget referring to a widget by name. Their API is the bot-user rows of the
 * route table: the planner is pure, so only the targets' shape matters here.
 */
import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../../src/errors.js';
import type { Declared, KindDefinition, LiveRecord } from '../../../src/kinds/index.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { PlanContext } from '../../../src/plan/context.js';
import { planGenericKinds } from '../../../src/plan/generic.js';
import { assertAcyclic } from '../../../src/plan/graph.js';
import type { ResourceChange } from '../../../src/plan/model.js';

const API = {
  list: 'listBotUsers',
  create: 'createBotUser',
  update: 'updateBotUser',
  delete: 'deleteBotUser',
};

const WIDGET: KindDefinition = {
  kind: 'widget',
  plural: 'widgets',
  manifestKinds: ['Widget'],
  description: 'a test kind owned through metadata',
  api: API,
  ownership: { by: 'metadata' },
  fields: [
    { name: 'description', desired: (d) => d.description, live: (l) => l.description },
    { name: 'shape', desired: (d) => d.shape, live: (l) => l.shape, replace: true },
  ],
  prune: true,
  order: 1,
};

const GADGET: KindDefinition = {
  kind: 'gadget',
  plural: 'gadgets',
  manifestKinds: ['Gadget'],
  description: 'a test kind matched by its key, referring to a widget',
  api: API,
  ownership: { by: 'key', key: (l) => String(l.host), declared: (d) => String(d.host) },
  fields: [
    { name: 'host', desired: (d) => d.host, live: (l) => l.host, replace: true, createOnly: true },
    {
      name: 'widget_id',
      desired: (d, resolve) =>
        d.widget === undefined
          ? undefined
          : resolve({ kind: 'widget', name: String(d.widget), path: ['widget'] }),
      live: (l) => l.widget_id,
    },
    { name: 'token', desired: (d) => d.token, live: (l) => l.token, sensitive: true },
  ],
  refersTo: ['widget'],
  prune: false,
  order: 2,
};

const KINDS = [WIDGET, GADGET];
const SOURCE = { file: 'a.yaml', line: 3, column: 1 };

function declared(kind: string, name: string, fields: Record<string, unknown> = {}): Declared {
  return { kind, name, source: SOURCE, sensitive: [], ...fields };
}

function desired(resources: Record<string, Declared[]>): DesiredSet {
  return { tlsEdges: [], httpsEdges: [], botUsers: [], cloudEndpoints: [], resources };
}

function owned(name: string, fields: Record<string, unknown> = {}, owner = 'default') {
  return { metadata: storedMetadata({}, { owner, name, protect: false }), ...fields };
}

function plan(
  resources: Record<string, Declared[]>,
  live: Record<string, LiveRecord[]>,
  options: ConstructorParameters<typeof PlanContext>[0] = {},
): PlanContext {
  const ctx = new PlanContext(options);
  planGenericKinds(ctx, desired(resources), { resources: live }, KINDS);
  return ctx;
}

function change(ctx: PlanContext, address: string): ResourceChange {
  const found = ctx.changes.find((c) => c.address === address);
  if (found === undefined) throw new Error(`no change for ${address}`);
  return found;
}

describe('the generic planner', () => {
  it('creates a declared resource not found live: one POST with every field and the owner mark', () => {
    const ctx = plan({ widget: [declared('widget', 'w1', { shape: 'round' })] }, {});
    const c = change(ctx, 'widget.w1');
    expect(c.action).toBe('create');
    expect(c.kind).toBe('widget');
    expect(c.operations).toHaveLength(1);
    const [op] = c.operations;
    expect(op?.method).toBe('POST');
    expect(op?.path).toBe('/bot_users');
    expect(op?.binds).toBe('widget.w1');
    expect(op?.body).toEqual({
      shape: 'round',
      metadata: storedMetadata({}, { owner: 'default', name: 'w1', protect: false }),
    });
  });

  it('leaves an up-to-date resource alone, and PATCHes only the changed fields', () => {
    const live = { widget: [{ id: 'w_1', ...owned('w1', { shape: 'round', description: 'a' }) }] };
    expect(
      change(
        plan({ widget: [declared('widget', 'w1', { shape: 'round', description: 'a' })] }, live),
        'widget.w1',
      ).action,
    ).toBe('noop');
    const c = change(
      plan({ widget: [declared('widget', 'w1', { shape: 'round', description: 'b' })] }, live),
      'widget.w1',
    );
    expect(c.action).toBe('update');
    expect(c.operations.map((o) => [o.method, o.path, o.body])).toEqual([
      ['PATCH', '/bot_users/w_1', { description: 'b' }],
    ]);
  });

  it('replaces a resource whose field cannot change in place: DELETE, then POST', () => {
    const live = { widget: [{ id: 'w_1', ...owned('w1', { shape: 'round' }) }] };
    const c = change(
      plan({ widget: [declared('widget', 'w1', { shape: 'square' })] }, live),
      'widget.w1',
    );
    expect(c.action).toBe('replace');
    expect(c.operations.map((o) => `${o.phase} ${o.method} ${o.path}`)).toEqual([
      'main DELETE /bot_users/w_1',
      'main POST /bot_users',
    ]);
  });

  it("deletes an orphan of a kind that prunes, never one of a kind that does not, nor another owner's", () => {
    const ctx = plan(
      {},
      {
        widget: [
          { id: 'w_1', ...owned('gone') },
          { id: 'w_2', ...owned('theirs', {}, 'someone-else') },
        ],
        gadget: [{ id: 'g_1', host: 'a.example.com' }],
      },
    );
    expect(ctx.changes.map((c) => `${c.action} ${c.address}`)).toEqual(['delete widget.gone']);
    expect(change(ctx, 'widget.gone').operations[0]?.phase).toBe('delete');
  });

  it('deletes a kind that does not prune only through ensure: absent', () => {
    const live = { gadget: [{ id: 'g_1', host: 'a.example.com' }] };
    const ctx = plan(
      { gadget: [declared('gadget', 'a', { host: 'a.example.com', ensure: 'absent' })] },
      live,
    );
    expect(
      change(ctx, 'gadget.a').operations.map((o) => `${o.phase} ${o.method} ${o.path}`),
    ).toEqual(['delete DELETE /bot_users/g_1']);
  });

  it('leaves a suspended resource as it is live', () => {
    const live = { widget: [{ id: 'w_1', ...owned('w1', { shape: 'round' }) }] };
    const ctx = plan(
      { widget: [declared('widget', 'w1', { shape: 'square', suspend: true })] },
      live,
    );
    expect(ctx.changes).toEqual([]);
    expect(ctx.blocked).toEqual([
      {
        address: 'widget.w1',
        kind: 'suspended',
        reason: 'w_1: suspend: true: left exactly as it is live',
      },
    ]);
  });

  it('adopts a live record by id: one PATCH writing the owner mark', () => {
    const live = { widget: [{ id: 'w_9', shape: 'round' }] };
    const c = change(
      plan({ widget: [declared('widget', 'w1', { shape: 'round', id: 'w_9' })] }, live),
      'widget.w1',
    );
    expect(c.action).toBe('adopt');
    expect(c.operations.map((o) => Object.keys(o.body as object))).toEqual([['metadata']]);
  });

  it('resolves a reference to a live resource by its ID', () => {
    const ctx = plan(
      {
        widget: [declared('widget', 'w1', { shape: 'round' })],
        gadget: [declared('gadget', 'g', { host: 'g.example.com', widget: 'w1' })],
      },
      { widget: [{ id: 'w_1', ...owned('w1', { shape: 'round' }) }] },
    );
    const op = change(ctx, 'gadget.g').operations[0];
    expect((op?.body as Record<string, unknown> | undefined)?.widget_id).toBe('w_1');
    expect(op?.after).toBeUndefined();
    expect(op?.fills).toBeUndefined();
  });

  it('refers to a resource the plan creates by its placeholder, filled by the executor, after its create', () => {
    const ctx = plan(
      {
        widget: [declared('widget', 'w1', { shape: 'round' })],
        gadget: [declared('gadget', 'g', { host: 'g.example.com', widget: 'w1' })],
      },
      {},
    );
    const op = change(ctx, 'gadget.g').operations[0];
    expect((op?.body as Record<string, unknown> | undefined)?.widget_id).toBe(
      '{created:widget.w1}',
    );
    expect(op?.fills).toEqual([['widget_id']]);
    expect(op?.after).toEqual(['widget.w1']);
  });

  it('blocks a resource whose reference names nothing declared or live', () => {
    const ctx = plan(
      { gadget: [declared('gadget', 'g', { host: 'g.example.com', widget: 'nope' })] },
      {},
    );
    expect(ctx.changes).toEqual([]);
    expect(ctx.blocked).toEqual([
      {
        address: 'gadget.g',
        kind: 'guard',
        reason: 'refers to widget.nope, which is neither declared nor live',
      },
    ]);
  });

  it('marks sensitive fields: in the field changes and the operation body', () => {
    const ctx = plan(
      { gadget: [declared('gadget', 'g', { host: 'g.example.com', token: 's3cret' })] },
      {},
    );
    const c = change(ctx, 'gadget.g');
    expect(c.fields.find((f) => f.path === 'token')?.sensitive).toBe(true);
    expect(c.operations[0]?.sensitive_paths).toEqual([['token']]);
  });

  it('plans only --target resources', () => {
    const ctx = plan(
      {
        widget: [
          declared('widget', 'w1', { shape: 'a' }),
          declared('widget', 'w2', { shape: 'b' }),
        ],
      },
      {},
      { targets: new Set(['widget.w2']) },
    );
    expect(ctx.changes.map((c) => c.address)).toEqual(['widget.w2']);
  });
});

describe("the plan's dependency graph", () => {
  const op = (after?: string[]) => ({
    method: 'POST' as const,
    target: { kind: 'bot_users' as const },
    path: '/bot_users',
    phase: 'main' as const,
    description: 'create',
    sensitive_paths: [],
    ...(after === undefined ? {} : { after }),
  });
  const at = (address: string, after?: string[]): ResourceChange => ({
    address,
    kind: 'bot_user',
    name: address,
    root: address,
    action: 'create',
    reason: 'test',
    source: { file: `${address}.yaml`, line: 1, column: 1 },
    fields: [],
    modules: [],
    operations: [op(after)],
  });

  it('accepts a chain, and refuses a cycle with a located error naming the loop', () => {
    expect(() => assertAcyclic([at('a'), at('b', ['a']), at('c', ['b'])])).not.toThrow();
    let thrown: unknown;
    try {
      assertAcyclic([at('a', ['c']), at('b', ['a']), at('c', ['b'])]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ManifestError);
    const diagnostics = (thrown as ManifestError).diagnostics;
    expect(diagnostics.map((d) => d.file).sort()).toEqual(['a.yaml', 'b.yaml', 'c.yaml']);
    expect(diagnostics[0]?.message).toContain('dependency cycle (a -> c -> b -> a)');
  });
});
