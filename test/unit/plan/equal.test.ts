/**
 * The planner compares modules with fast-deep-equal, after normalization: the semantics that are
 * not plain deep equality (lists as sets, zero values as "not set", header-name case, defaults)
 * are normalization's, so the library sees two canonical forms and nothing else.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const compared = vi.hoisted(() => ({ calls: [] as [unknown, unknown][] }));

vi.mock('fast-deep-equal', async (importOriginal) => {
  const actual = (await importOriginal<{ default: (a: unknown, b: unknown) => boolean }>()).default;
  return {
    default: (a: unknown, b: unknown) => {
      compared.calls.push([a, b]);
      return actual(a, b);
    },
  };
});

const { diffModule, fieldChanges, Sensitivity } = await import('../../../src/plan/diff.js');

afterEach(() => {
  compared.calls.length = 0;
});

describe('module comparison: normalize, then fast-deep-equal', () => {
  it('hands the library the canonical forms of both sides', () => {
    const live = { add: { 'X-B': '2', 'X-A': '1' }, remove: ['X-Z', 'x-y'] };
    const desired = { remove: ['x-y', 'x-z'], add: { 'x-a': '1', 'x-b': '2' } };
    expect(diffModule('request_headers', desired, live)?.status).toBe('unchanged');
    const [before, after] = compared.calls[0] ?? [];
    expect(before).toEqual({ add: { 'x-a': '1', 'x-b': '2' }, remove: ['x-y', 'x-z'] });
    expect(after).toEqual(before);
  });

  it('list order, key order and zero values are normalization: equal', () => {
    const live = { ip_policy_ids: ['ipp_2', 'ipp_1'], extra: null };
    const desired = { ip_policy_ids: ['ipp_1', 'ipp_2'] };
    expect(diffModule('ip_restriction', desired, live)?.status).toBe('unchanged');
    expect(compared.calls).toHaveLength(1);
  });

  it('a value of another type, a missing key or a longer list is a change', () => {
    const base = { ip_policy_ids: ['ipp_1'] };
    expect(diffModule('ip_restriction', { ip_policy_ids: ['ipp_1', 'ipp_2'] }, base)?.status).toBe(
      'set',
    );
    expect(
      diffModule(
        'circuit_breaker',
        { error_threshold_percentage: '0.5' },
        {
          error_threshold_percentage: 0.5,
        },
      )?.status,
    ).toBe('set');
    expect(compared.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('field changes skip equal subtrees through the same comparison', () => {
    const changes = fieldChanges(
      ['oauth'],
      { provider: { google: { scopes: ['a'] } }, max: 1 },
      { provider: { google: { scopes: ['a'] } }, max: 2 },
      new Sensitivity([]),
    );
    expect(changes.map((c) => c.path)).toEqual(['oauth.max']);
    expect(compared.calls.length).toBeGreaterThan(1);
  });
});
