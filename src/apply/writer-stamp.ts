/**
 * The writer stamp of write-only values, as the executor sends them: every write of a kind whose
 * values are never read back (a secret's) records beside their keyed digest the actor it is made
 * as (`edgesync/by`, bound into the digest; src/plan/generic.ts), so that a later write by
 * someone else shows as a `last_updated_by` other than it. The planner stamps writes with the
 * actor the account shows; this module owns what only answers tell:
 * - the actor is learned from each answer's writer (`KindDefinition.writer`);
 * - the first stamped write of a run goes alone; the others wait for its answer and go out
 *   stamped with the actor it named (one call each, not two);
 * - an answer whose writer is not the one its record keeps (the first write on an account, or a
 *   credential that now acts as another actor) is followed by one metadata-only PATCH stamping
 *   the writer it names.
 * The digests come from the caller's `stamp` (made where the key is), never computed here.
 */
import { KINDS, type KindDefinition, type LiveRecord } from '../kinds/index.js';
import { recordMetadata } from '../manifest/metadata.js';
import type { Operation } from '../plan/model.js';
import { resolveTarget, routeTarget, type Target } from '../plan/target.js';

/** The `metadata` of the resource at an address written as `writer` (undefined: none kept). */
export type WriterStamp = (address: string, writer: string) => string | undefined;

/** The kinds whose writes carry a writer stamp: write-only fields, and a writer to read. */
const STAMPED: ReadonlyMap<string, KindDefinition> = new Map(
  KINDS.filter(
    (k) => k.writer !== undefined && (k.fields ?? []).some((f) => f.writeOnly === true),
  ).map((k) => [k.kind, k]),
);

/** The writer a body's `metadata` records, and whether it holds a digest at all. */
function bodyStamp(body: unknown): { readonly writer: string | undefined } | undefined {
  const metadata = (body as { metadata?: unknown } | undefined)?.metadata;
  if (typeof metadata !== 'string') return undefined;
  const parsed = recordMetadata({ metadata });
  return parsed?.digest === undefined ? undefined : { writer: parsed.writer };
}

/** The follow-up PATCH an answer calls for: its target and body. */
export interface StampFollowUp {
  readonly target: Target;
  readonly body: { readonly metadata: string };
}

/** One execution's knowledge of the actor it writes as. */
export class WriterStamps {
  readonly #stamp: WriterStamp | undefined;
  /** The actor this run's answers named (undefined: none answered yet). */
  #writer: string | undefined;
  /** Settles when the write that is learning the actor is answered (or fails). */
  #learning: Promise<void> | undefined;
  /** An answer named no writer: the service does not say who wrote, nothing to wait for. */
  #silent = false;

  constructor(stamp: WriterStamp | undefined) {
    this.#stamp = stamp;
  }

  /**
   * The body to send for a write: restamped with the actor an earlier answer named when the
   * plan knew another or none. Before any answer named one, a write either becomes the one that
   * learns it (`release` when it is answered or failed) or waits for that one.
   */
  async before(
    address: string,
    kind: string,
    op: Pick<Operation, 'method'>,
    body: unknown,
  ): Promise<{ readonly body: unknown; readonly release?: () => void }> {
    if (this.#stamp === undefined || !STAMPED.has(kind)) return { body };
    if (op.method !== 'POST' && op.method !== 'PATCH') return { body };
    const planned = bodyStamp(body);
    if (planned === undefined || this.#silent) return { body };
    while (this.#writer === undefined && this.#learning !== undefined) await this.#learning;
    if (this.#writer !== undefined) {
      if (planned.writer === this.#writer) return { body };
      const metadata = this.#stamp(address, this.#writer);
      return metadata === undefined ? { body } : { body: { ...(body as object), metadata } };
    }
    // The first stamped write of the run goes alone: its answer names the actor the others are
    // stamped with (the one the plan knew, or another: a credential now acting as another).
    let release = () => {};
    this.#learning = new Promise<void>((resolve) => {
      release = () => {
        this.#learning = undefined;
        resolve();
      };
    });
    return { body, release };
  }

  /**
   * Learns the actor an answer names; the metadata-only PATCH that stamps it, when the record
   * keeps another writer (or none) beside a digest edgesync keeps.
   */
  after(address: string, kind: string, answer: unknown): StampFollowUp | undefined {
    const definition = STAMPED.get(kind);
    if (this.#stamp === undefined || definition === undefined) return undefined;
    if (typeof answer !== 'object' || answer === null) return undefined;
    const record = answer as LiveRecord;
    const writer = definition.writer?.(record);
    if (writer === undefined) {
      this.#silent = true;
      return undefined;
    }
    this.#writer = writer;
    const kept = recordMetadata(record as { metadata?: string | null });
    if (kept?.digest === undefined || kept.writer === writer) return undefined;
    const metadata = this.#stamp(address, writer);
    if (metadata === undefined || typeof record.id !== 'string') return undefined;
    const method = definition.api.update;
    if (method === undefined) return undefined;
    const target = resolveTarget(routeTarget(method, record.id), () => undefined);
    return target === undefined ? undefined : { target, body: { metadata } };
  }
}
