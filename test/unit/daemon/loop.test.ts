import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  type CycleOutcome,
  createReconcileLoop,
  type LoopOptions,
  PreemptedError,
} from '../../../src/daemon/loop.js';
import type { TriggerReason } from '../../../src/daemon/types.js';
import { AbortedError } from '../../../src/errors.js';
import { flush, ManualClock } from './manual-clock.js';

interface Call {
  readonly reason: TriggerReason;
  readonly at: number;
  readonly signal: AbortSignal;
  finish(outcome: CycleOutcome): void;
}

/** A loop whose cycles wait until the test finishes them (or finish at once with `auto`). */
function setup(overrides: Partial<LoopOptions> = {}, auto?: () => CycleOutcome) {
  const clock = new ManualClock();
  const calls: Call[] = [];
  const errors: unknown[] = [];
  const loop = createReconcileLoop({
    intervalMs: 60_000,
    debounceMs: 250,
    debounceMaxMs: 2500,
    backoff: { baseMs: 1000, maxMs: 8000 },
    timers: clock,
    now: clock.now,
    onCycleError: (err) => errors.push(err),
    cycle: (reason, signal) =>
      new Promise<CycleOutcome>((resolve) => {
        calls.push({ reason, at: clock.now(), signal, finish: resolve });
        if (auto) resolve(auto());
      }),
    ...overrides,
  });
  const last = (): Call => {
    const call = calls.at(-1);
    if (!call) throw new Error('no cycle ran');
    return call;
  };
  return { clock, calls, errors, loop, last };
}

describe('backoffDelay', () => {
  it.each([
    [0, 0],
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [5, 16_000],
    [9, 256_000],
    [10, 300_000],
    [11, 300_000],
    [5000, 300_000],
  ])('after %i failures waits %i ms (base 1 s, cap 5 min)', (failures, expected) => {
    expect(backoffDelay(failures, { baseMs: 1000, maxMs: 300_000 })).toBe(expected);
  });
});

describe('reconcile loop', () => {
  it('runs a startup cycle, then resyncs every interval after success', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    expect(calls.map((c) => [c.reason, c.at])).toEqual([['startup', 0]]);
    expect(loop.snapshot()).toMatchObject({ nextAt: 60_000, nextReason: 'resync', failures: 0 });
    await clock.advance(59_999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    await clock.advance(60_000);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['resync', 60_000],
      ['resync', 120_000],
    ]);
  });

  it('ignores triggers before start and after stop', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.trigger('webhook');
    loop.notifyChange('file');
    await clock.advance(1000);
    expect(calls).toHaveLength(0);
    loop.start();
    await flush();
    await loop.stop(1000);
    loop.trigger('webhook');
    loop.notifyChange('file');
    await clock.advance(120_000);
    expect(calls.map((c) => c.reason)).toEqual(['startup']);
    expect(clock.pending()).toBe(0);
  });

  it('keeps one cycle in flight and coalesces every trigger meanwhile into one queued cycle', async () => {
    const { clock, calls, loop, last } = setup();
    loop.start();
    await flush();
    for (let i = 0; i < 5; i++) loop.trigger('webhook');
    loop.trigger('manual');
    loop.notifyChange('file');
    await clock.advance(1000);
    expect(calls).toHaveLength(1);
    expect(loop.snapshot()).toMatchObject({ inFlight: 'startup', queued: 'webhook' });
    last().finish('success');
    await flush();
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'webhook']);
    expect(loop.snapshot().queued).toBeUndefined();
    last().finish('success');
    await clock.advance(59_999);
    expect(calls).toHaveLength(2);
  });

  it('debounces file changes: one cycle, debounceMs after the last event', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    for (const t of [0, 100, 200]) {
      await clock.advance(t === 0 ? 1000 : 100);
      loop.notifyChange('file');
    }
    // Last event at 1200: the cycle is due at 1450, not before.
    await clock.advance(249);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['file', 1450],
    ]);
  });

  it('counts the quiet period from when a change was made, when the watcher knows it', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    // A save seen at 1000, then found changed again on the watcher's second look at 1100: the
    // file was last written at 1001 (its ctime), so the cycle is due at 1251, not at 1350.
    await clock.advance(1000);
    loop.notifyChange('file');
    await clock.advance(100);
    loop.notifyChange('file', 1001);
    await clock.advance(150);
    expect(calls.map((c) => c.at)).toEqual([0]);
    await clock.advance(1);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['file', 1251],
    ]);
  });

  it('never ends the quiet period of a later change early, nor trusts a time from the future', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    await clock.advance(1000);
    loop.notifyChange('file'); // due 1250
    await clock.advance(200);
    loop.notifyChange('file'); // another file at 1200: due 1450
    await clock.advance(100);
    loop.notifyChange('file', 1001); // the first one, seen again at 1300: still due 1450
    loop.notifyChange('file', 0); // an older clock: counted from 1300 - 250 at most
    await clock.advance(149);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(calls.at(-1)?.at).toBe(1450);
    // A change time ahead of ours (a file system whose clock runs ahead): counted from now.
    loop.notifyChange('file', clock.now() + 60_000);
    await clock.advance(249);
    expect(calls).toHaveLength(2);
    await clock.advance(1);
    expect(calls.at(-1)?.at).toBe(1700);
  });

  it('reports a burst with a link change as a link change', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    loop.notifyChange('file');
    loop.notifyChange('link');
    loop.notifyChange('file');
    await clock.advance(250);
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'link']);
  });

  it('never lets a constant stream of events postpone a cycle past debounceMaxMs', async () => {
    const { clock, calls, loop } = setup({ debounceMaxMs: 1000 }, () => 'success');
    loop.start();
    await flush();
    for (let i = 0; i < 30; i++) {
      loop.notifyChange('file');
      await clock.advance(100);
    }
    const fileCycles = calls.filter((c) => c.reason === 'file').map((c) => c.at);
    expect(fileCycles).toEqual([1000, 2000, 3000]);
  });

  it('backs off exponentially up to the cap, then resets on success', async () => {
    let outcome: CycleOutcome = 'failure';
    const { clock, calls, loop } = setup({}, () => outcome);
    loop.start();
    await clock.advance(40_000);
    const times = calls.map((c) => c.at);
    // Gaps: 1 s, 2 s, 4 s, 8 s (cap), 8 s, 8 s.
    expect(times).toEqual([0, 1000, 3000, 7000, 15_000, 23_000, 31_000, 39_000]);
    expect(calls.slice(1).every((c) => c.reason === 'retry')).toBe(true);
    expect(loop.snapshot()).toMatchObject({ failures: 8, backoffMs: 8000, nextReason: 'retry' });

    outcome = 'success';
    await clock.advance(8000);
    expect(loop.snapshot()).toMatchObject({ failures: 0, backoffMs: 0, nextReason: 'resync' });
    expect(loop.snapshot().nextAt).toBe(47_000 + 60_000);

    outcome = 'failure';
    loop.trigger('manual');
    await flush();
    expect(calls.at(-1)).toMatchObject({ reason: 'manual', at: 48_000 });
    expect(loop.snapshot()).toMatchObject({ failures: 1, nextAt: 48_000 + 1000 });
  });

  it('runs change triggers at once while backing off, without resetting the failure count', async () => {
    const { clock, calls, loop } = setup({}, () => 'failure');
    loop.start();
    await clock.advance(3000); // failures at 0, 1000, 3000: next retry at 7000
    expect(loop.snapshot()).toMatchObject({ failures: 3, nextAt: 7000 });
    await clock.advance(10);
    loop.trigger('webhook');
    await flush();
    expect(calls.at(-1)).toMatchObject({ reason: 'webhook', at: 3010 });
    expect(loop.snapshot()).toMatchObject({ failures: 4, nextAt: 3010 + 8000 });
    loop.notifyChange('file');
    await clock.advance(250);
    expect(calls.at(-1)).toMatchObject({ reason: 'file', at: 3260 });
    // The periodic path still waits for the backoff.
    await clock.advance(8000 - 1);
    expect(calls.at(-1)?.reason).toBe('file');
    await clock.advance(1);
    expect(calls.at(-1)).toMatchObject({ reason: 'retry', at: 3260 + 8000 });
  });

  it('counts a cycle that throws as a failure and reports the error', async () => {
    const boom = new Error('boom');
    const { clock, errors, loop } = setup({
      cycle: () => Promise.reject(boom),
    });
    loop.start();
    await clock.advance(0);
    expect(errors).toEqual([boom]);
    expect(loop.snapshot()).toMatchObject({ failures: 1, nextReason: 'retry', nextAt: 1000 });
  });

  it('survives a cycle function that throws synchronously', async () => {
    let throwNow = true;
    const { clock, errors, loop } = setup({
      cycle: () => {
        if (throwNow) throw new Error('sync');
        return Promise.resolve('success');
      },
    });
    loop.start();
    await clock.advance(0);
    expect(errors).toHaveLength(1);
    throwNow = false;
    await clock.advance(1000);
    expect(loop.snapshot()).toMatchObject({
      failures: 0,
      inFlight: undefined,
      nextReason: 'resync',
    });
  });

  it('neither counts nor resets failures for a superseded cycle, and runs the queued one', async () => {
    const { clock, calls, loop, last } = setup();
    loop.start();
    await flush();
    last().finish('failure');
    await clock.advance(1000);
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'retry']);
    loop.trigger('link');
    last().finish('superseded');
    await flush();
    expect(loop.snapshot()).toMatchObject({ failures: 1, inFlight: 'link' });
    last().finish('success');
    await flush();
    expect(loop.snapshot()).toMatchObject({ failures: 0 });
  });

  it('stop aborts the cycle in flight and resolves when it ends', async () => {
    const { clock, loop, last } = setup();
    loop.start();
    await flush();
    loop.trigger('webhook');
    const stopped = loop.stop(10_000);
    const { signal } = last();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(AbortedError);
    await clock.advance(500);
    last().finish('failure');
    await expect(stopped).resolves.toBe(true);
    // No queued cycle, no retry, no grace timer left behind.
    await clock.advance(120_000);
    expect(loop.snapshot()).toMatchObject({
      inFlight: undefined,
      queued: undefined,
      stopped: true,
    });
    expect(clock.pending()).toBe(0);
  });

  it('stop gives up after the grace period when the cycle ignores its signal', async () => {
    const { clock, loop } = setup();
    loop.start();
    await flush();
    let settled: boolean | undefined;
    void loop.stop(10_000).then((ok) => {
      settled = ok;
    });
    await clock.advance(9999);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    expect(settled).toBe(false);
  });

  it('stop resolves at once when idle', async () => {
    const { clock, loop } = setup({}, () => 'success');
    loop.start();
    await flush();
    await expect(loop.stop(10_000)).resolves.toBe(true);
    expect(clock.pending()).toBe(0);
  });
});

describe('a change never waits behind a resync', () => {
  it('a file, link, webhook or leader trigger preempts a resync in flight', async () => {
    for (const reason of ['file', 'link', 'webhook', 'leader'] as const) {
      const { clock, calls, loop, last } = setup();
      loop.start();
      last().finish('success');
      await flush();
      await clock.advance(60_000);
      expect(last().reason).toBe('resync');
      const resync = last();
      loop.trigger(reason);
      expect(resync.signal.aborted).toBe(true);
      expect(resync.signal.reason).toBeInstanceOf(PreemptedError);
      resync.finish('superseded');
      await flush();
      expect(calls.map((c) => c.reason)).toEqual(['startup', 'resync', reason]);
      loop.stop(0);
    }
  });

  it('does not preempt a change cycle, and a resync never preempts anything', async () => {
    const { clock, calls, loop, last } = setup();
    loop.start();
    last().finish('success');
    await flush();
    loop.trigger('webhook');
    const change = last();
    loop.trigger('file');
    expect(change.signal.aborted).toBe(false);
    change.finish('success');
    await flush();
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'webhook', 'file']);
    last().finish('success');
    await flush();
    await clock.advance(60_000);
    expect(last().reason).toBe('resync');
    loop.stop(0);
  });

  it('reads the resync interval each time it schedules one', async () => {
    let interval = 60_000;
    const { clock, loop, last } = setup({ intervalMs: () => interval });
    loop.start();
    interval = 200_000;
    last().finish('success');
    await flush();
    expect(loop.snapshot().nextAt).toBe(clock.now() + 200_000);
    loop.stop(0);
  });

  it('a partial (incremental) success keeps the resync due when it was', async () => {
    const { clock, calls, loop, last } = setup();
    loop.start();
    last().finish('success');
    await flush();
    // Edits every 20 s: each one's cycle is partial, and the resync still comes at 60 s.
    for (const at of [20_000, 40_000]) {
      await clock.advance(at - clock.now());
      loop.trigger('file');
      last().finish('partial');
      await flush();
      expect(loop.snapshot()).toMatchObject({ nextAt: 60_000, nextReason: 'resync' });
    }
    await clock.advance(60_000 - clock.now());
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['file', 20_000],
      ['file', 40_000],
      ['resync', 60_000],
    ]);
    // A full success (the resync) sets the next one an interval later.
    last().finish('success');
    await flush();
    expect(loop.snapshot().nextAt).toBe(120_000);
    loop.stop(0);
  });

  it('a resync preempted by a file event runs right after the partial cycle of the change', async () => {
    const { clock, calls, loop, last } = setup();
    loop.start();
    last().finish('success');
    await flush();
    await clock.advance(60_000);
    const resync = last();
    await clock.advance(5_000);
    loop.trigger('file');
    resync.finish('superseded');
    await flush();
    expect(last().reason).toBe('file');
    last().finish('partial');
    await flush();
    await clock.advance(0);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['resync', 60_000],
      ['file', 65_000],
      ['resync', 65_000],
    ]);
    loop.stop(0);
  });
});

describe('requested cycles share the resync budget', () => {
  it('a flood of webhook triggers runs at most one cycle per triggerGapMs', async () => {
    const { clock, calls, loop } = setup({ triggerGapMs: () => 6000 }, () => 'success');
    loop.start();
    await flush();
    // 200 requests, each after the previous cycle has ended: unpaced, each would run one.
    for (let i = 0; i < 200; i++) {
      loop.trigger(i % 2 === 0 ? 'webhook' : 'manual');
      await clock.advance(50);
    }
    // 10 s have passed: the startup cycle at 0, one requested cycle at 6 s, the next due at 12 s.
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['webhook', 6000],
    ]);
    await clock.advance(2000);
    expect(calls.map((c) => c.at)).toEqual([0, 6000, 12_000]);
    await clock.advance(60_000);
    // Nothing more was asked: the deferral does not repeat itself; the resync comes as usual.
    expect(calls.map((c) => c.reason)).toEqual(['startup', 'webhook', 'webhook', 'resync']);
  });

  it('counts from the last full cycle of any reason, but never paces file or link changes', async () => {
    const { clock, calls, loop } = setup({ triggerGapMs: () => 6000 }, () => 'success');
    loop.start();
    await clock.advance(5000);
    loop.notifyChange('link');
    await clock.advance(300); // the link cycle starts at 5250
    loop.trigger('webhook');
    await clock.advance(1000);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['link', 5250],
    ]);
    await clock.advance(10_000);
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['link', 5250],
      ['webhook', 11_250],
    ]);
  });

  it('without a gap a trigger still runs at once (no budget: coalescing only)', async () => {
    const { clock, calls, loop } = setup({}, () => 'success');
    loop.start();
    await clock.advance(10);
    loop.trigger('webhook');
    await flush();
    expect(calls.map((c) => [c.reason, c.at])).toEqual([
      ['startup', 0],
      ['webhook', 10],
    ]);
  });

  it('stop clears a deferred trigger', async () => {
    const { clock, calls, loop } = setup({ triggerGapMs: () => 6000 }, () => 'success');
    loop.start();
    await flush();
    loop.trigger('webhook');
    await loop.stop(0);
    expect(clock.pending()).toBe(0);
    await clock.advance(10_000);
    expect(calls).toHaveLength(1);
  });
});
