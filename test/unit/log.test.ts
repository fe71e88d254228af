import { prettyFactory } from 'pino-pretty';
import { describe, expect, it } from 'vitest';
import { PRETTY_OPTIONS } from '../../src/log.js';

describe('pretty logs', () => {
  it('print one line per event, fields included, without pid and host name', () => {
    const pretty = prettyFactory({ ...PRETTY_OPTIONS, colorize: false });
    const line = JSON.stringify({
      level: 30,
      time: '2026-01-02T03:04:05.678Z',
      pid: 4242,
      hostname: 'box',
      name: 'edgesync',
      module: 'daemon',
      result: 'changed',
      summary: { create: 18, update: 0 },
      msg: 'reconcile changed',
    });
    const out = pretty(`${line}\n`);
    expect(out.trimEnd().split('\n')).toHaveLength(1);
    expect(out).toContain('INFO');
    expect(out).toContain('reconcile changed');
    expect(out).toContain('"summary":{"create":18,"update":0}');
    expect(out).not.toContain('4242');
    expect(out).not.toContain('box');
  });
});
