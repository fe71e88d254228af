import { describe, expect, it } from 'vitest';
import { watchParent } from '../../../src/cli/parent.js';

/** A poller driven by the test: `tick()` runs the check once, as the interval would. */
function manualPoll() {
  let check: (() => void) | undefined;
  let stopped = false;
  return {
    every: (_ms: number, fn: () => void) => {
      check = fn;
      return () => {
        stopped = true;
      };
    },
    tick: () => {
      if (!stopped) check?.();
    },
    watching: () => check !== undefined && !stopped,
  };
}

describe('watchParent', () => {
  it('calls onGone once, with the first parent, when the process is reparented', () => {
    let ppid = 4242;
    const gone: number[] = [];
    const poll = manualPoll();
    watchParent({
      ppid: () => ppid,
      hangupIgnored: () => false,
      every: poll.every,
      onGone: (p) => gone.push(p),
    });
    poll.tick();
    expect(gone).toEqual([]);
    ppid = 1; // npx killed: the CLI now belongs to init
    poll.tick();
    poll.tick();
    expect(gone).toEqual([4242]);
    expect(poll.watching()).toBe(false);
  });

  it.each([
    ['started by init (a container or systemd child)', 1, false],
    ['pid 1 itself', 0, false],
    ['started under nohup (SIGHUP ignored)', 4242, true],
  ])('does not watch when %s', (_what, ppid, nohup) => {
    const poll = manualPoll();
    watchParent({
      ppid: () => ppid,
      hangupIgnored: () => nohup,
      every: poll.every,
      onGone: () => {},
    });
    expect(poll.watching()).toBe(false);
  });
});
