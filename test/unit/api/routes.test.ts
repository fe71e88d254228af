import { describe, expect, it } from 'vitest';
import {
  API_OPERATIONS,
  fillTemplate,
  operationFor,
  templateOf,
  templateOfPath,
  templateParams,
} from '../../../src/api/routes.js';
import { sendOperation } from '../../../src/apply/dispatch.js';
import type { Operation } from '../../../src/plan/model.js';
import { plannedTargetSchema, type Target, targetPath } from '../../../src/plan/target.js';
import { fakeClient } from '../apply/fake.js';

/** The plan target of an operation of the table, its IDs named after its template's parameters. */
const targetOf = (op: (typeof API_OPERATIONS)[number]): Target =>
  plannedTargetSchema.parse({
    ...op.target,
    ...Object.fromEntries(templateParams(op.template).map((p) => [p, `${p}_1`])),
  }) as Target;

const writes = API_OPERATIONS.filter((op) => op.method !== 'GET');

describe('the table of operations', () => {
  it('has one operation per method and target, and one template per target', () => {
    const keys = API_OPERATIONS.map((op) => `${op.method} ${JSON.stringify(op.target)}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const op of API_OPERATIONS) {
      expect(operationFor(op.method, op.target)).toBe(op);
      expect(templateOf(op.target)).toBe(op.template);
      expect(templateOfPath(op.template)).toBe(op.template);
    }
  });

  it('covers every kind of plan target, with the fields its template names', () => {
    const kinds = new Set(API_OPERATIONS.map((op) => op.target.kind));
    const [shaped] = plannedTargetSchema.options;
    // Every shaped target kind is the table's; the table's other kinds are flat collections.
    for (const o of shaped.options) expect(kinds.has(o.shape.kind.value)).toBe(true);
    // A target built from the template's parameters is a valid plan target (strict schemas).
    for (const op of API_OPERATIONS) expect(() => targetOf(op)).not.toThrow();
  });

  it('gives each create, update and module set a write schema, each delete none', () => {
    for (const op of API_OPERATIONS) {
      expect(op.body !== undefined, `${op.method} ${op.template}`).toBe(
        op.method === 'POST' || op.method === 'PATCH' || op.method === 'PUT',
      );
      expect(op.answer === undefined, `${op.method} ${op.template}`).toBe(op.method === 'DELETE');
    }
  });
});

describe('plan paths from the table', () => {
  it.each(API_OPERATIONS.map((op) => [op.template, op] as const))(
    '%s: a target renders as its template filled',
    (template, op) => {
      expect(targetPath(targetOf(op))).toBe(fillTemplate(template, (p) => `${p}_1`));
    },
  );

  it('renders a module the table lacks under its owner, to name a refused operation', () => {
    const target = { kind: 'edge_module', edge_kind: 'https', id: 'e', module: 'backend' } as const;
    expect(operationFor('PUT', target)).toBeUndefined();
    expect(targetPath(target)).toBe('/edges/https/e/backend');
  });
});

describe('dispatch by the table', () => {
  it.each(writes.map((op) => [op.method, op.template, op] as const))(
    '%s %s: checked by its write schema, sent by its client method',
    async (method, _template, op) => {
      const { client, calls } = fakeClient(() => ({ id: 'x_1' }));
      const target = targetOf(op);
      const send = (body: unknown) =>
        sendOperation(client, method as Operation['method'], target, body);
      const refused = op.body === undefined ? /must not carry a body/ : /invalid body/;
      await expect(send({ not_a_field: 1 })).rejects.toThrow(refused);
      expect(calls).toEqual([]);
      if (op.body !== undefined) return;
      await send(undefined);
      const params = templateParams(op.template).map((p) => `${p}_1`);
      const owner =
        op.target.kind === 'route_module'
          ? { kind: 'route', edgeId: 'edge_id_1', id: 'id_1' }
          : { kind: `${op.target.edge_kind}_edge`, id: 'id_1' };
      const args = op.target.module === undefined ? params : [owner, op.target.module];
      expect(calls).toEqual([{ fn: op.name, args }]);
    },
  );
});
