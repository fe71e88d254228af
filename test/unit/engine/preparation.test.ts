/**
 * Which preparation a cycle gets: incremental only for a manifest change against a kept
 * snapshot, full for everything else. No call is made: choosing reads nothing.
 */
import { describe, expect, it } from 'vitest';
import { type LiveSnapshot, NO_CALLS } from '../../../src/api/index.js';
import { newEngineState, type ReconcilerOptions } from '../../../src/engine/context.js';
import type { ReconcileInput, TriggerReason } from '../../../src/engine/contract.js';
import { choosePreparation } from '../../../src/engine/preparation.js';
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
