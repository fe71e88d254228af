/**
 * Which preparation a cycle gets: incremental only for a manifest change against a kept
 * snapshot, full for everything else. No call is made: choosing reads nothing. And what a full
 * preparation lets go of before it lists.
 */
import { describe, expect, it } from 'vitest';
import { type ApiClient, type LiveSnapshot, NO_CALLS } from '../../../src/api/index.js';
import { newEngineState, type ReconcilerOptions } from '../../../src/engine/context.js';
import type { ReconcileInput, TriggerReason } from '../../../src/engine/contract.js';
import { choosePreparation, fullPreparation } from '../../../src/engine/preparation.js';
import { reconcilerOptions } from '../../helpers/reconciler.js';

const KEPT: LiveSnapshot = {
  tlsEdges: [],
  httpsEdges: [],
  botUsers: [],
  cloudEndpoints: [],
  calls: NO_CALLS,
};

function options(incremental?: boolean): ReconcilerOptions {
  return reconcilerOptions(incremental === undefined ? {} : { incremental });
}

function input(reason: TriggerReason): ReconcileInput {
  return {
    dir: '/nonexistent',
    revision: undefined,
    reason,
    signal: new AbortController().signal,
    assertCurrent: async () => undefined,
  };
}

describe('choosePreparation', () => {
  it.each([
    ['file', true, undefined, 'incremental'],
    ['link', true, undefined, 'incremental'],
    ['file', false, undefined, 'full'],
    ['link', true, false, 'full'],
    ['startup', true, undefined, 'full'],
    ['resync', true, undefined, 'full'],
    ['retry', true, undefined, 'full'],
    ['webhook', true, undefined, 'full'],
    ['manual', true, undefined, 'full'],
    ['leader', true, undefined, 'full'],
  ] as const)(
    'a %s trigger (snapshot kept: %s, incremental: %s) is prepared %s',
    (reason, kept, incremental, kind) => {
      const state = newEngineState();
      if (kept) state.kept = KEPT;
      expect(choosePreparation(input(reason), options(incremental), state).kind).toBe(kind);
    },
  );
});

describe('fullPreparation', () => {
  it('drops the kept snapshot before it lists: never two accounts in memory at once', async () => {
    const state = newEngineState();
    state.kept = KEPT;
    // What was kept when each listing began; every listing is refused.
    const keptAtListing: (LiveSnapshot | undefined)[] = [];
    const client = new Proxy({} as ApiClient, {
      get: (_target, name) =>
        typeof name === 'string' && name.startsWith('list')
          ? async () => {
              keptAtListing.push(state.kept);
              throw new Error('listing refused');
            }
          : undefined,
    });
    const full = fullPreparation(reconcilerOptions({ client }), state);
    await expect(full.prepare(input('resync'))).rejects.toThrow();
    expect(keptAtListing.length).toBeGreaterThan(0);
    expect(keptAtListing.every((kept) => kept === undefined)).toBe(true);
    // A full cycle that did not converge leaves nothing kept: the next change lists again.
    expect(state.kept).toBeUndefined();
    expect(choosePreparation(input('file'), options(), state).kind).toBe('full');
  });
});
