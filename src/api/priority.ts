/**
 * The limiter priority of the API calls made inside `withPriority(...)`: a daemon cycle run for
 * a manifest change marks its calls `high`, so they go ahead of a resync's listing waiting in
 * the same limiter. AsyncLocalStorage carries it through every await, so neither the planner
 * nor the applier passes it along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Priority } from './rate-limit.js';

const storage = new AsyncLocalStorage<Priority>();

export function withPriority<T>(priority: Priority, fn: () => T): T {
  return storage.run(priority, fn);
}

/** The priority of the calling context (`normal` outside any `withPriority`). */
export function currentPriority(): Priority {
  return storage.getStore() ?? 'normal';
}
