/**
 * The text renderer, like `terraform plan`: one headline per resource (`+` create in green,
 * `~` update and adopt in yellow, `-` delete in red), its field changes nested below with
 * before -> after, secrets masked, then the blocked resources and the summary line. Colour only
 * when asked for (the command turns it off for NO_COLOR and non-terminals). Pure.
 */
import { escapeControl } from '../../escape.js';
import type { MaskedPlan } from '../mask.js';
import { type Action, leftAlone } from '../model.js';
import {
  fieldLines,
  headline,
  NO_CHANGES,
  READINESS_TITLE,
  readinessLines,
  SYMBOL,
  summaryLine,
  visibleChanges,
} from './common.js';
import { CUTOVER_TITLE, cutoverLines } from './cutover.js';
import { IMPACT_TITLE, impactTextLines } from './impact.js';

export interface TextOptions {
  readonly color?: boolean;
}

const CODES = { green: 32, yellow: 33, red: 31, bold: 1 } as const;

/** The sections of resources left as they are live, by the kind of their blocked entry. */
const LEFT_ALONE_TITLES = [
  ['suspended', ['Suspended', '(suspend: true, left as they are live)']],
  ['excluded', ['Excluded', '(declared in files --exclude skips, left as they are live)']],
] as const;
type Colour = keyof typeof CODES;

const ACTION_COLOUR: Readonly<Record<Action, Colour | undefined>> = {
  create: 'green',
  update: 'yellow',
  adopt: 'yellow',
  delete: 'red',
  replace: 'red',
  noop: undefined,
};
const SYMBOL_COLOUR: Readonly<Record<'+' | '-' | '~', Colour>> = {
  '+': 'green',
  '-': 'red',
  '~': 'yellow',
};

/** Renders a plan masked by `maskPlan` (the only kind it accepts). */
export function renderText(masked: MaskedPlan, options: TextOptions = {}): string {
  const paint = (colour: Colour | undefined, text: string): string =>
    options.color === true && colour !== undefined ? `\x1b[${CODES[colour]}m${text}\x1b[0m` : text;
  const changes = visibleChanges(masked);
  const lines: string[] = [];

  if (changes.length > 0) {
    lines.push(
      `edgesync will perform the following actions (owner "${escapeControl(masked.owner)}"):`,
      '',
    );
    for (const change of changes) {
      const colour = ACTION_COLOUR[change.action];
      lines.push(`  ${paint(colour, SYMBOL[change.action])} ${paint('bold', headline(change))}`);
      for (const field of change.fields) {
        for (const l of fieldLines(field, false)) {
          lines.push(`      ${paint(SYMBOL_COLOUR[l.symbol], l.symbol)} ${l.text}`);
        }
      }
      lines.push('');
    }
  } else {
    // The owner decides what a plan may touch: it is shown even when nothing changes.
    lines.push(`edgesync plan for owner "${escapeControl(masked.owner)}":`, '');
  }
  const cutovers = masked.cutovers ?? [];
  if (cutovers.length > 0) {
    lines.push(`${paint('bold', CUTOVER_TITLE)}:`, '');
    cutovers.forEach((c, i) => {
      for (const [j, l] of cutoverLines(c).entries()) {
        const lead = j === 0 ? `${i + 1}.`.padStart(4) : '    ';
        lines.push(`${lead} ${paint(SYMBOL_COLOUR[l.symbol], l.symbol)} ${l.text}`);
      }
    });
    lines.push('');
  }
  const impact = impactTextLines(masked);
  if (impact.length > 0) {
    lines.push(`${paint('bold', IMPACT_TITLE)}:`, '');
    const colour = { '!': 'red', '~': 'yellow', ' ': undefined } as const;
    for (const l of impact) {
      lines.push(
        l.symbol === ' ' ? `  ${l.text}` : `    ${paint(colour[l.symbol], l.symbol)} ${l.text}`,
      );
    }
    lines.push('');
  }
  const blocked = masked.blocked.filter((b) => !leftAlone(b));
  for (const [kind, title] of LEFT_ALONE_TITLES) {
    const alone = masked.blocked.filter((b) => b.kind === kind);
    if (alone.length === 0) continue;
    lines.push(`${paint('yellow', title[0])} ${title[1]}:`, '');
    for (const b of alone) {
      lines.push(`  ${paint('yellow', '=')} ${escapeControl(`${b.address}: ${b.reason}`)}`);
    }
    lines.push('');
  }
  if (blocked.length > 0) {
    lines.push(`${paint('red', 'Blocked')} (not attempted):`, '');
    for (const b of blocked) {
      lines.push(`  ${paint('red', '!')} ${escapeControl(`${b.address}: ${b.kind}: ${b.reason}`)}`);
    }
    lines.push('');
  }
  const readiness = masked.readiness ?? [];
  if (readiness.length > 0) {
    lines.push(`${paint('yellow', READINESS_TITLE)}:`, '');
    for (const r of readiness) {
      const [head, ...records] = readinessLines(r);
      const mark = paint(r.state === 'error' ? 'red' : 'yellow', '!');
      lines.push(`  ${mark} ${escapeControl(head ?? '')}`);
      for (const l of records) lines.push(`      ${escapeControl(l)}`);
    }
    lines.push('');
  }
  for (const w of masked.warnings) lines.push(`${paint('yellow', 'Warning:')} ${escapeControl(w)}`);
  if (masked.warnings.length > 0) lines.push('');
  if (changes.length === 0 && masked.blocked.length === 0) {
    lines.push(NO_CHANGES);
  } else {
    lines.push(paint('bold', summaryLine(masked)));
  }
  return `${lines.join('\n')}\n`;
}
