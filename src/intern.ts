/**
 * Bounded tables of shared values: one value per distinct key, so the thousands of equal values
 * a large plan repeats (field paths, lists of them) cost one each while a daemon keeps them.
 * When full, a table starts over: a set with more distinct values than that only shares less.
 */
export class Interned<T> {
  readonly #table = new Map<string, T>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The value kept for `key`; `value`, kept from now on, when there is none. */
  of(key: string, value: T): T {
    const known = this.#table.get(key);
    if (known !== undefined) return known;
    if (this.#table.size >= this.#max) this.#table.clear();
    this.#table.set(key, value);
    return value;
  }
}
