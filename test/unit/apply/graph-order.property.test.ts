/**
 * The executor orders by the plan's dependency graph and nothing else (property): on generated
 * plans (roots with operations of every role, `requires` and `after` between them) with
 * generated failures and concurrency, every operation sent starts after all of its graph
 * predecessors finished, none is sent past a failed one it depends on, and every operation not
 * sent depends on a failure (or sits in a cut-over that stopped at a failed unit). And one case
 * the roles alone never ordered: a reference between two operations of the cut-over.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executePlan, type OperationOutcome } from '../../../src/apply/executor.js';
import { planGraph } from '../../../src/plan/graph.js';
import type { Operation, Phase, ResourceChange } from '../../../src/plan/model.js';
import { apiError, change, fakeClient, op, plan } from './fake.js';

const base = { sleep: async () => {}, now: () => 0, random: () => 0 };
const PHASES: readonly Phase[] = ['release', 'cutover', 'main', 'delete'];
const SUCCEEDED = new Set<OperationOutcome>(['ok', 'recovered', 'gone']);

interface OpSpec {
  readonly phase: Phase;
  readonly requires: readonly number[];
  readonly after: readonly number[];
  readonly fails: boolean;
}

const opSpec = fc.record({
  phase: fc.constantFrom(...PHASES),
  requires: fc.uniqueArray(fc.nat(6), { maxLength: 2 }),
  after: fc.uniqueArray(fc.nat(6), { maxLength: 2 }),
  fails: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
});

const planSpec = fc.record({
  roots: fc.array(fc.array(opSpec, { minLength: 1, maxLength: 3 }), {
    minLength: 1,
    maxLength: 7,
  }),
  concurrency: fc.integer({ min: 1, max: 4 }),
});

/** Root i names only roots before it, so `requires` and `after` alone make no cycle. */
function changesOf(roots: readonly (readonly OpSpec[])[]): {
  changes: ResourceChange[];
  failing: Set<string>;
} {
  const failing = new Set<string>();
  const names = (i: number, list: readonly number[]) =>
    list.filter((j) => j < i).map((j) => `tls_edge.e${j}`);
  const changes = roots.map((ops, i) =>
    change(
      `tls_edge.e${i}`,
      ops.map((spec, j): Operation => {
        const path = `/edges/tls/edgtls_${i}x${j}`;
        if (spec.fails) failing.add(`edgtls_${i}x${j}`);
        const requires = names(i, spec.requires);
        const after = names(i, spec.after);
        return op(spec.phase === 'delete' ? 'DELETE' : 'PATCH', path, {
          phase: spec.phase,
          ...(spec.phase === 'delete' ? {} : { body: { description: `${i}.${j}` } }),
          ...(requires.length === 0 ? {} : { requires }),
          ...(after.length === 0 ? {} : { after }),
        });
      }),
    ),
  );
  return { changes, failing };
}

describe('the executor runs the plan graph', () => {
  it('every operation after its predecessors; a failure skips what depends on it (property)', async () => {
    await fc.assert(
      fc.asyncProperty(planSpec, async ({ roots, concurrency }) => {
        const { changes, failing } = changesOf(roots);
        const graph = planGraph(changes);
        // A root that follows an edge's cut-over may close a loop the planner would refuse.
        fc.pre(graph.cycle === undefined);
        const placed = graph.waves.flat().flatMap((u) => [...u.lead, ...u.follow.flat()]);
        expect(placed.map((s) => s.index).sort((a, b) => a - b)).toEqual(
          graph.steps.map((s) => s.index),
        );

        let clock = 0;
        const tick = () => {
          clock += 1;
          return clock;
        };
        const started = new Map<number, number>();
        const finished = new Map<number, number>();
        const outcome = new Map<number, OperationOutcome>();
        const byPath = new Map(graph.steps.map((s) => [s.op.path, s.index]));
        const { client } = fakeClient((call) => {
          const id = String(call.args[0]);
          const index = byPath.get(`/edges/tls/${id}`);
          if (index !== undefined) started.set(index, tick());
          return failing.has(id) ? apiError('PATCH', `/edges/tls/${id}`, 400) : undefined;
        });
        const result = await executePlan(plan(changes), {
          client,
          concurrency,
          ...base,
          onProgress: (e) => {
            const index = byPath.get(e.path);
            if (index === undefined) throw new Error(`unknown path ${e.path}`);
            expect(outcome.has(index)).toBe(false);
            finished.set(index, tick());
            outcome.set(index, e.outcome);
          },
        });
        expect(outcome.size).toBe(graph.steps.length);
        expect(result.done + result.failed + result.skipped).toBe(graph.steps.length);

        const joinOf = new Map(Object.entries(graph.joins).map(([k, v]) => [v, k]));
        const into = (node: number) => graph.edges.filter((e) => e.to === node);
        const failed = (i: number) => outcome.get(i) === 'failed';
        // Predecessors through the joins, and all that comes before them.
        const ancestors = (i: number): Set<number> => {
          const seen = new Set<number>();
          const todo = [i];
          while (todo.length > 0) {
            for (const e of into(todo.pop() as number)) {
              if (seen.has(e.from)) continue;
              seen.add(e.from);
              todo.push(e.from);
            }
          }
          return new Set([...seen].filter((n) => !joinOf.has(n)));
        };
        const cutoverSteps = new Set(
          graph.waves
            .flat()
            .filter((u) => u.cutover)
            .flatMap((u) => [...u.lead, ...u.follow.flat()].map((s) => s.index)),
        );
        const cutoverStopped = [...cutoverSteps].some(failed);

        for (const s of graph.steps) {
          const start = started.get(s.index);
          if (start !== undefined) {
            for (const e of into(s.index)) {
              const join = joinOf.get(e.from);
              const preds = join === undefined ? [e.from] : into(e.from).map((f) => f.from);
              for (const p of preds) {
                expect(finished.get(p) ?? Infinity, `${p} before ${s.index}`).toBeLessThan(start);
              }
              if (join === undefined) {
                expect(failed(e.from), `${s.index} sent past failed ${e.from}`).toBe(false);
                if (e.reason === 'reference' || e.reason === 'claim' || e.reason === 'handover') {
                  expect(SUCCEEDED.has(outcome.get(e.from) ?? 'skipped')).toBe(true);
                }
              } else if (join === 'settled' || (join === 'released' && s.op.phase === 'cutover')) {
                expect(preds.some(failed), `${s.index} behind a failure (${join})`).toBe(false);
              }
            }
            continue;
          }
          // Not sent: it depends on a failure, or the cut-over stopped at a failed unit.
          const dependsOnFailure = [...ancestors(s.index)].some(failed);
          expect(
            dependsOnFailure || (cutoverStopped && cutoverSteps.has(s.index)),
            `${s.change.address} ${s.op.path} ${outcome.get(s.index)}`,
          ).toBe(true);
        }
        if (failing.size === 0) expect(result.done).toBe(graph.steps.length);
      }),
      { seed: 20261129, numRuns: 300 },
    );
  });
});

describe('the executor orders by edges, not by roles', () => {
  it('an operation of the cut-over that refers to another waits for it', async () => {
    const events: string[] = [];
    const { client } = fakeClient((call) => {
      events.push(`send ${String(call.args[0])}`);
      return undefined;
    });
    const changes = [
      change('tls_edge.e0', [op('PATCH', '/edges/tls/edgtls_0', { phase: 'cutover', body: {} })]),
      change('tls_edge.e1', [
        op('PATCH', '/edges/tls/edgtls_1', { phase: 'cutover', body: {}, after: ['tls_edge.e0'] }),
      ]),
    ];
    const result = await executePlan(plan(changes), {
      client,
      concurrency: 2,
      ...base,
      onProgress: (e) => events.push(`${e.outcome} ${e.path}`),
    });
    expect(result.done).toBe(2);
    expect(events).toEqual([
      'send edgtls_0',
      'ok /edges/tls/edgtls_0',
      'send edgtls_1',
      'ok /edges/tls/edgtls_1',
    ]);
  });
});
