/**
 * What the three renderers share: symbols, verbs, value formatting and the summary line. Pure.
 * Renderers take only a `MaskedPlan` (src/plan/mask.ts): every secret is masked, by
 * field and by value, before any of them escapes text for its format.
 */
import { escapeControl } from '../../escape.js';
import { MASKED } from '../../manifest/secrets.js';
import type {
  Action,
  FieldChange,
  PlanFile as Plan,
  ResourceChangeFile as ResourceChange,
} from '../model.js';

export const SYMBOL: Readonly<Record<Action, string>> = {
  create: '+',
  update: '~',
  adopt: '~',
  delete: '-',
  replace: '-/+',
  noop: ' ',
};

export const VERB: Readonly<Record<Action, string>> = {
  create: 'will be created',
  update: 'will be updated in place',
  adopt: 'will be adopted',
  delete: 'will be deleted',
  replace: 'will be replaced (deleted, then created)',
  noop: 'is up to date',
};

export const NO_CHANGES = 'No changes. Live state matches the manifests.';

/**
 * JSON for values; the mask stays bare so it reads as a marker, not as a string value. JSON
 * escapes C0 controls itself; DEL, C1 and bidirectional controls are escaped on top.
 */
export function formatValue(value: unknown): string {
  if (value === MASKED) return MASKED;
  return escapeControl(JSON.stringify(value) ?? 'null');
}

/** The changes worth showing: everything but `noop`. */
export function visibleChanges(plan: Plan): ResourceChange[] {
  return plan.changes.filter((c) => c.action !== 'noop');
}

export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  // A plan that is only blocked must say so, not read as "nothing to do".
  const nSuspended = plan.blocked.filter((b) => b.kind === 'suspended').length;
  const nExcluded = plan.blocked.filter((b) => b.kind === 'excluded').length;
  const nBlocked = plan.blocked.length - nSuspended - nExcluded;
  const blocked = nBlocked > 0 ? `, ${nBlocked} blocked` : '';
  const suspended = nSuspended > 0 ? `, ${nSuspended} suspended` : '';
  const excluded = nExcluded > 0 ? `, ${nExcluded} excluded` : '';
  return `Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.adopt} to adopt${blocked}${suspended}${excluded}.`;
}

/** The headline of a resource: `tls_edge.api (edgtls_1) will be deleted: manifest removed`. */
export function headline(change: ResourceChange): string {
  const id = change.id === undefined ? '' : ` (${change.id})`;
  return escapeControl(`${change.address}${id} ${VERB[change.action]}: ${change.reason}`);
}

export type FieldLine = { readonly symbol: '+' | '-' | '~'; readonly text: string };

/**
 * One field change as lines. `split` gives an update as a `-` and a `+` line (diff blocks);
 * otherwise it is one `~ path = before -> after` line.
 */
export function fieldLines(field: FieldChange, split: boolean): FieldLine[] {
  const hasBefore = 'before' in field;
  const hasAfter = 'after' in field;
  if (hasBefore && hasAfter) {
    if (split) {
      return [
        { symbol: '-', text: `${escapeControl(field.path)} = ${formatValue(field.before)}` },
        { symbol: '+', text: `${escapeControl(field.path)} = ${formatValue(field.after)}` },
      ];
    }
    return [
      {
        symbol: '~',
        text: `${escapeControl(field.path)} = ${formatValue(field.before)} -> ${formatValue(field.after)}`,
      },
    ];
  }
  const path = escapeControl(field.path);
  if (hasAfter) return [{ symbol: '+', text: `${path} = ${formatValue(field.after)}` }];
  return [{ symbol: '-', text: `${path} = ${formatValue(field.before)}` }];
}

/** The title of the resources not ready to serve yet (a domain waiting for DNS). */
export const READINESS_TITLE = 'Not ready';

/**
 * One not-ready resource in lines: its address, state and message, then each DNS record it
 * needs (`name CNAME target`).
 */
export function readinessLines(entry: NonNullable<Plan['readiness']>[number]): string[] {
  return [
    `${entry.address} (${entry.id}): ${entry.state}: ${entry.message}`,
    ...(entry.records ?? []).map((r) => `needs DNS record ${r.name} ${r.type} ${r.target}`),
  ];
}
