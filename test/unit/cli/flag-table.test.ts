/**
 * The flag table (src/cli/flag-table.ts) is the one statement of every flag: each command's
 * parser options, its `--help` and completion come from it, its defaults are the ones the
 * commands fall back to, and what it says of a flag's environment variable is in its help.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONCURRENCY } from '../../../src/apply/executor.js';
import { completionTable } from '../../../src/cli/commands/completion.js';
import { commands } from '../../../src/cli/commands.js';
import { LOCAL_DAEMON_URL } from '../../../src/cli/daemon-client.js';
import { DEFAULT_STATE_DIR } from '../../../src/cli/embedded-api.js';
import { flagSignature, optionsHelp } from '../../../src/cli/flag-help.js';
import {
  COMMAND_NAMES,
  type CommandName,
  commandOptions,
  FLAGS,
  type FlagSpec,
  flagsOf,
} from '../../../src/cli/flag-table.js';
import { DAEMON_DEFAULTS } from '../../../src/daemon/options.js';
import { parseDuration } from '../../../src/duration.js';
import { LEASE_DEFAULTS } from '../../../src/lease/setup.js';
import { DEFAULT_MAX_DELETES } from '../../../src/plan/context.js';

const specs: readonly FlagSpec[] = FLAGS;
const oneLine = (text: string) => text.replace(/\s+/g, ' ');

describe('the flag table', () => {
  it('names exactly the commands of the command table', () => {
    expect([...COMMAND_NAMES].sort()).toEqual(Object.keys(commands).sort());
  });

  it.each(COMMAND_NAMES)('%s: its options, help and completion are the table’s', async (name) => {
    const mod = await commands[name]?.();
    const flags = flagsOf(name);
    const names = flags.map((f) => f.name);
    expect(new Set(names).size, `${name} takes one flag per name`).toBe(names.length);
    expect(names).toContain('help');
    expect(mod?.OPTIONS).toEqual(commandOptions(name));
    expect(Object.keys(mod?.OPTIONS ?? {})).toEqual(names);
    const usage = oneLine(mod?.USAGE ?? '');
    expect(mod?.USAGE.startsWith(`usage: edgesync ${name}`)).toBe(true);
    expect(mod?.USAGE).toContain(optionsHelp(name));
    for (const f of flags) {
      // The signature shows the short form wherever the parser takes one.
      expect(usage).toContain(` ${flagSignature(f)} `);
      expect(usage).toContain(oneLine(f.help));
    }
    const completed = (await completionTable()).find((c) => c.name === name);
    expect(completed?.flags.map((f) => [f.long, f.short, f.description])).toEqual(
      flags.map((f) => [f.name, f.short, f.help]),
    );
  });

  it('says of every flag with an environment variable, in each command’s help, which one', () => {
    for (const name of COMMAND_NAMES) {
      for (const f of flagsOf(name)) {
        if (f.env === undefined) continue;
        expect(f.help, `${name} --${f.name}`).toContain(f.env);
      }
    }
  });

  it('keeps a command’s own help or value only for a command that takes the flag', () => {
    for (const spec of specs) {
      const own = [...Object.keys(spec.helpFor ?? {}), ...Object.keys(spec.valueFor ?? {})];
      for (const name of own) expect(spec.commands, `--${spec.name}`).toContain(name);
    }
  });

  it('gives each short form one long flag across commands', () => {
    const meaning = new Map<string, string>();
    for (const spec of specs) {
      if (spec.short === undefined) continue;
      expect(meaning.get(spec.short) ?? spec.name).toBe(spec.name);
      meaning.set(spec.short, spec.name);
    }
  });

  it('states the defaults the commands fall back to, and each help states its default', () => {
    const defaults = (name: string, command: CommandName) =>
      flagsOf(command).find((f) => f.name === name)?.default;
    const ms = (name: string, command: CommandName = 'run') =>
      parseDuration(defaults(name, command) ?? '');
    expect(defaults('concurrency', 'apply')).toBe(String(DEFAULT_CONCURRENCY));
    expect(defaults('max-deletes', 'plan')).toBe(String(DEFAULT_MAX_DELETES));
    expect(defaults('listen', 'run')).toBe(LOCAL_DAEMON_URL.replace('http://', ''));
    expect(defaults('url', 'status')).toBe(LOCAL_DAEMON_URL);
    expect(defaults('state-dir', 'run')).toBe(DEFAULT_STATE_DIR);
    expect(ms('interval')).toBe(DAEMON_DEFAULTS.intervalMs);
    expect(ms('debounce')).toBe(DAEMON_DEFAULTS.debounceMs);
    expect(ms('grace')).toBe(DAEMON_DEFAULTS.graceMs);
    expect(ms('lease-duration')).toBe(LEASE_DEFAULTS.leaseDurationMs);
    expect(ms('renew-deadline')).toBe(LEASE_DEFAULTS.renewDeadlineMs);
    expect(ms('retry-period')).toBe(LEASE_DEFAULTS.retryPeriodMs);
    for (const name of COMMAND_NAMES) {
      for (const f of flagsOf(name)) {
        // `--output`'s help marks its default choice "(default)"; `import --out`'s is in words.
        if (f.default === undefined || f.name === 'out' || f.name === 'output') continue;
        expect(f.help, `${name} --${f.name}`).toContain(f.default);
      }
    }
  });

  it('wraps help within 100 columns, descriptions in one column', () => {
    for (const name of COMMAND_NAMES) {
      for (const line of optionsHelp(name).split('\n')) {
        expect(line.length, `${name}: ${line}`).toBeLessThanOrEqual(100);
        if (/^ {3,}\S/.test(line)) expect(line.search(/\S/), `${name}: ${line}`).toBe(24);
      }
    }
  });
});
