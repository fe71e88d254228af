/**
 * `apply --output json`: the machine-readable result of an apply, versioned, on stdout. Built
 * from the same values the text summary (`progress.ts`) is: operation counts, writes, failures
 * (address, method, path, message, code), kept and conflicting resources, the residual drift
 * and whether the account converged. No operation body and no field value ever enters it, so
 * it holds no secret. Pure.
 */
import type { Diagnostic } from '../errors.js';
import type { Blocked } from '../plan/model.js';
import type { CycleOutcome } from './cycle.js';

export const APPLY_RESULT_FORMAT_VERSION = 1;

/**
 * Why the apply ended: `converged` (applied and verified, or nothing to do), `not_converged`
 * (applied, differences remain or the check failed), `failed` (operations failed), `refused` (a
 * guard blocked the plan: nothing written), `blocked` (nothing to do but conflicts remain),
 * `not_confirmed` (no confirmation: nothing written), `invalid` (manifest errors: nothing written).
 */
export type ApplyStatus =
  | 'converged'
  | 'not_converged'
  | 'failed'
  | 'refused'
  | 'blocked'
  | 'not_confirmed'
  | 'invalid';

interface BlockedJson {
  readonly address: string;
  readonly reason: string;
}

export interface ApplyResultJson {
  readonly format_version: typeof APPLY_RESULT_FORMAT_VERSION;
  readonly status: ApplyStatus;
  readonly converged: boolean;
  readonly operations: {
    readonly total: number;
    readonly done: number;
    readonly failed: number;
    readonly skipped: number;
  };
  readonly writes: number;
  readonly errors: readonly {
    readonly address: string;
    readonly method: string;
    readonly path: string;
    readonly code: string;
    readonly message: string;
  }[];
  readonly notes: readonly string[];
  /**
   * Hosts and ports left served by nothing: a cut-over deleted their edge and their cloud
   * endpoint was not created (the notes say how to restore them).
   */
  readonly unserved: readonly {
    readonly hostport: string;
    readonly edge: string;
    readonly edge_id: string;
    readonly endpoint: string;
  }[];
  readonly kept: readonly BlockedJson[];
  readonly conflicts: readonly BlockedJson[];
  /** What the post-apply plan still wants (empty when converged or not checked). */
  readonly residual: readonly {
    readonly action: string;
    readonly address: string;
    readonly reason: string;
  }[];
  readonly verify_error: string | null;
  /** Guard refusals (`refused`). */
  readonly refusals: readonly string[];
  /** Manifest diagnostics (`invalid`). */
  readonly diagnostics: readonly {
    readonly file: string;
    readonly line: number;
    readonly column: number;
    readonly path: string;
    readonly message: string;
  }[];
}

const blockedJson = (list: readonly Blocked[]): BlockedJson[] =>
  list.map((b) => ({ address: b.address, reason: b.reason }));

/** A result where nothing ran: the plan's operations counted as skipped. */
export function notAppliedResult(
  status: Exclude<ApplyStatus, 'not_converged' | 'failed'>,
  details: {
    readonly operations?: number;
    readonly kept?: readonly Blocked[];
    readonly conflicts?: readonly Blocked[];
    readonly refusals?: readonly string[];
    readonly diagnostics?: readonly Diagnostic[];
    readonly reason?: string;
  } = {},
): ApplyResultJson {
  const total = details.operations ?? 0;
  return {
    format_version: APPLY_RESULT_FORMAT_VERSION,
    status,
    converged: status === 'converged',
    operations: { total, done: 0, failed: 0, skipped: total },
    writes: 0,
    errors: [],
    notes: details.reason === undefined ? [] : [details.reason],
    unserved: [],
    kept: blockedJson(details.kept ?? []),
    conflicts: blockedJson(details.conflicts ?? []),
    residual: [],
    verify_error: null,
    refusals: [...(details.refusals ?? [])],
    diagnostics: (details.diagnostics ?? []).map((d) => ({
      file: d.file,
      line: d.line,
      column: d.column,
      path: d.path,
      message: d.message,
    })),
  };
}

/** The result of an apply that ran. */
export function appliedResult(outcome: CycleOutcome): ApplyResultJson {
  const r = outcome.result;
  const status: ApplyStatus = outcome.converged
    ? 'converged'
    : r.failed > 0 || r.aborted || r.accountState !== undefined
      ? 'failed'
      : 'not_converged';
  return {
    format_version: APPLY_RESULT_FORMAT_VERSION,
    status,
    converged: outcome.converged,
    operations: { total: r.total, done: r.done, failed: r.failed, skipped: r.skipped },
    writes: r.writes,
    errors: r.errors.map((e) => ({
      address: e.address,
      method: e.method,
      path: e.path,
      code: e.code,
      message: e.message,
    })),
    notes: [...r.messages],
    unserved: (r.unserved ?? []).map((u) => ({
      hostport: u.hostport,
      edge: u.edge,
      edge_id: u.edgeId,
      endpoint: u.endpoint,
    })),
    kept: blockedJson(outcome.kept),
    conflicts: blockedJson(outcome.conflicts),
    residual: [
      ...(outcome.residual?.changes ?? []).map((c) => ({
        action: c.action,
        address: c.address,
        reason: c.reason,
      })),
      ...(outcome.residual?.blocked ?? []).map((b) => ({
        action: 'blocked',
        address: b.address,
        reason: b.reason,
      })),
    ],
    verify_error: outcome.verifyError ?? null,
    refusals: [],
    diagnostics: [],
  };
}

export function renderApplyResult(result: ApplyResultJson): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}
