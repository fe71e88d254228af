/**
 * The daemon's after-cycle collection runs when the heap asks for it (it grew by a share of what
 * the last collection kept), not after every cycle: an edit's few MB of garbage cost no full mark.
 */
import { expect, it } from 'vitest';
import { COLLECT_GROWTH, COLLECT_MIN_BYTES, collectWhenGrown } from '../../../src/daemon/memory.js';

const MIB = 1024 * 1024;

/** A heap whose reading the test sets; a collection brings it down to `live`. */
function fakeHeap(live: number) {
  const heap = { used: live, live, collections: 0 };
  const hook = collectWhenGrown(
    () => {
      heap.collections += 1;
      heap.used = heap.live;
    },
    () => heap.used,
  );
  return { heap, hook };
}

it('collects after the first cycle, then only once the heap grew past the threshold', () => {
  const { heap, hook } = fakeHeap(200 * MIB);
  heap.used = 400 * MIB;
  expect(hook()).toBe(true);
  expect(heap.collections).toBe(1);
  // Edits: a few MB each, well under a quarter of 200 MiB.
  for (let i = 0; i < 5; i++) {
    heap.used += 5 * MIB;
    expect(hook()).toBe(false);
  }
  expect(heap.collections).toBe(1);
  // The garbage of the edits adds up: past the threshold, the next cycle collects.
  heap.used = 200 * MIB + 200 * MIB * COLLECT_GROWTH;
  expect(hook()).toBe(true);
  expect(heap.collections).toBe(2);
});

it('asks for at least the minimum growth when little is kept', () => {
  const { heap, hook } = fakeHeap(10 * MIB);
  hook();
  heap.used = 10 * MIB + COLLECT_MIN_BYTES - 1;
  expect(hook()).toBe(false);
  heap.used = 10 * MIB + COLLECT_MIN_BYTES;
  expect(hook()).toBe(true);
});

it("takes a lower reading (V8's own collection) as the new floor", () => {
  const { heap, hook } = fakeHeap(200 * MIB);
  hook();
  // V8 collected by itself and the live set shrank to 100 MiB.
  heap.live = 100 * MIB;
  heap.used = 100 * MIB;
  expect(hook()).toBe(false);
  // 40 MiB more is a quarter of 100 (not of 200): it collects.
  heap.used = 140 * MIB;
  expect(hook()).toBe(true);
  expect(heap.collections).toBe(2);
});
