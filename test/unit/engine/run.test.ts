/**
 * The engine's run, the one entry point of `plan`, `apply` and the daemon: its steps in order,
 * each ending it or handing it on; the guards assessed once and handed to the executor; no
 * write before the confirmation says yes.
 */
import { describe, expect, it } from 'vitest';
import { type LiveSnapshot, NO_CALLS } from '../../../src/api/index.js';
import { executePlan } from '../../../src/apply/executor.js';
import { checkGuards } from '../../../src/apply/guards.js';
import type { Prepared } from '../../../src/engine/incremental.js';
import { type RunEnding, run } from '../../../src/engine/run.js';
import { GuardError } from '../../../src/errors.js';
import type { DesiredSet } from '../../../src/manifest/schema.js';
import { createValueMask } from '../../../src/manifest/secrets.js';
import { buildPlan } from '../../../src/plan/index.js';
import { change, fakeClient, op, plan } from '../apply/fake.js';
import { desiredSet, tlsManifest } from '../plan/builders.js';

const EMPTY_LIVE: LiveSnapshot = {
  tlsEdges: [],
  httpsEdges: [],
  botUsers: [],
  cloudEndpoints: [],
  calls: NO_CALLS,
};

function prepared(desired: DesiredSet): Prepared {
  return {
    plan: buildPlan(desired, EMPTY_LIVE, { owner: 'default' }),
    live: EMPTY_LIVE,
    desired,
    mode: 'full',
    stamps: new Map(),
  };
}

const ONE_CREATE = desiredSet({
  tls: [tlsManifest({ name: 'api', hostports: ['api.example.com:443'] })],
});

/** Eleven deletions: more than the default --max-deletes. */
const deletes = Array.from({ length: 11 }, (_, i) =>
  change(`https_edge.e${i}`, [op('DELETE', `/edges/https/edghts_${i}`, { phase: 'delete' })], {
    action: 'delete',
  }),
);

/** A run of `ready` with every hook recorded, and the calls its client got. */
async function runOf(
  ready: Prepared,
  hooks: {
    readonly confirm?: true | string | undefined;
    readonly hold?: string | undefined;
  } = {},
): Promise<{ ending: RunEnding<string>; steps: string[]; calls: number }> {
  const { client, calls } = fakeClient();
  const steps: string[] = [];
  const mask = createValueMask();
  const ending = await run<string>({
    prepare: async () => {
      steps.push('prepare');
      return ready;
    },
    client,
    maxDeletes: 10,
    allowEmpty: false,
    planOptions: () => ({ owner: 'default' }),
    mask: {
      set: (values) => {
        steps.push('assess');
        mask.set(values);
      },
      apply: mask.apply,
    },
    hold: async () => {
      steps.push('hold');
      return hooks.hold;
    },
    ...(hooks.confirm === undefined
      ? {}
      : {
          confirm: async () => {
            steps.push('confirm');
            return hooks.confirm as true | string;
          },
        }),
    concurrency: 1,
    beforeVerify: () => steps.push(`before the check, after ${calls.length} call(s)`),
  });
  return { ending, steps, calls: calls.length };
}

describe('the run', () => {
  it('only plans without a confirmation hook, whatever the plan would do', async () => {
    const { ending, steps, calls } = await runOf(prepared(ONE_CREATE));
    expect(ending.ending).toBe('planned');
    expect(steps).toEqual(['prepare', 'assess', 'hold']);
    expect(calls).toBe(0);
    expect(ending.run.verdict.refusals).toEqual([]);
    expect(ending.run.show().changes.map((c) => c.action)).toEqual(['create']);
  });

  it('ends where the caller holds it, before its confirmation', async () => {
    const { ending, steps } = await runOf(prepared(ONE_CREATE), { hold: 'stale', confirm: true });
    expect(ending).toMatchObject({ ending: 'held', held: 'stale' });
    expect(steps).toEqual(['prepare', 'assess', 'hold']);
  });

  it('ends refused before the confirmation when a guard refuses', async () => {
    const ready = { ...prepared(desiredSet()), plan: plan(deletes) };
    const { ending, steps, calls } = await runOf(ready, { confirm: true });
    expect(ending.ending).toBe('refused');
    expect(ending.run.verdict.refusals.join()).toMatch(/more than --max-deletes 10/);
    expect(steps).toEqual(['prepare', 'assess', 'hold']);
    expect(calls).toBe(0);
  });

  it('ends converged with nothing to do, never asking', async () => {
    const ready = prepared(desiredSet());
    const { ending, steps } = await runOf(ready, { confirm: true });
    expect(ending.ending).toBe('converged');
    expect(steps).not.toContain('confirm');
  });

  it('writes nothing when the confirmation says no', async () => {
    const { ending, steps, calls } = await runOf(prepared(ONE_CREATE), { confirm: 'Not applied.' });
    expect(ending).toMatchObject({ ending: 'declined', reason: 'Not applied.' });
    expect(steps).toEqual(['prepare', 'assess', 'hold', 'confirm']);
    expect(calls).toBe(0);
  });

  it('applies once confirmed, and verifies with one re-plan', async () => {
    const { ending, steps, calls } = await runOf(prepared(ONE_CREATE), { confirm: true });
    // The caller's hook runs between the writes and the check that reads them back (the
    // daemon collects what the apply left there, before the check's reading).
    expect(steps).toEqual([
      'prepare',
      'assess',
      'hold',
      'confirm',
      'before the check, after 1 call(s)',
    ]);
    expect(ending.ending).toBe('applied');
    if (ending.ending !== 'applied') return;
    expect(ending.applied.outcome.result).toMatchObject({ total: 1, done: 1, writes: 1 });
    // One POST, then the check reads back what was touched (one GET).
    expect(calls).toBe(2);
  });
});

describe('the executor, handed the run verdict', () => {
  it('takes the verdict assessed for that plan instead of checking the guards again', async () => {
    const p = plan(deletes);
    const refused = checkGuards(p);
    expect(refused.refusals).not.toEqual([]);
    // A verdict made with a raised limit: the executor runs the plan on it.
    const verdict = checkGuards(p, { maxDeletes: 11 });
    const { client, calls } = fakeClient();
    const result = await executePlan(p, { client, assessed: { plan: p, verdict } });
    expect(result.done).toBe(11);
    expect(calls).toHaveLength(11);
  });

  it('checks the guards of a plan the verdict was not made for', async () => {
    const p = plan(deletes);
    const verdict = checkGuards(p, { maxDeletes: 11 });
    const { client, calls } = fakeClient();
    const other = { ...p };
    const err = await executePlan(other, { client, assessed: { plan: p, verdict } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GuardError);
    expect(calls).toEqual([]);
  });

  it('refuses a verdict with refusals, without checking again', async () => {
    const p = plan([]);
    const verdict = { refusals: ['no'], fatal: [], conflicts: [], kept: [] };
    const { client } = fakeClient();
    await expect(executePlan(p, { client, assessed: { plan: p, verdict } })).rejects.toThrow(
      GuardError,
    );
  });
});
