/** A cycle's outcome as a commit status (src/daemon/commit-status.ts), and `--notify` receivers. */
import { describe, expect, it } from 'vitest';
import {
  type CycleOutcome,
  commitStatusOf,
  commitStatusRequest,
} from '../../../src/daemon/commit-status.js';
import { notifyReceivers } from '../../../src/daemon/notify.js';
import { RECONCILE_RESULTS } from '../../../src/daemon/types.js';

const SHA = 'f'.repeat(40);
const outcome = (o: Partial<CycleOutcome>): CycleOutcome => ({
  result: 'converged',
  revision: SHA,
  summary: { create: 0, update: 0, delete: 0, adopt: 0, noop: 3 },
  writes: 0,
  outOfSync: 0,
  errors: 0,
  ...o,
});

describe('commitStatusOf', () => {
  it.each([
    ['converged', {}, 'success', 'in sync: nothing to change'],
    [
      'changed',
      { summary: { create: 1, update: 2, delete: 1, adopt: 1, noop: 0 }, writes: 6 },
      'success',
      'applied: 1 created, 3 updated, 1 deleted (6 writes)',
    ],
    [
      'drift',
      { outOfSync: 2 },
      'pending',
      'not applied yet: 2 resources differ (observe mode, suspended or blocked)',
    ],
    [
      'invalid',
      { errors: 3 },
      'failure',
      'invalid manifests: 3 errors ("edgesync status" lists them)',
    ],
    ['error', {}, 'failure', 'reconcile failed ("edgesync status" says why)'],
    ['lost_leadership', {}, 'failure', 'reconcile failed ("edgesync status" says why)'],
  ] as const)('%s: %s', (result, extra, state, description) => {
    expect(commitStatusOf(outcome({ result, ...extra }))).toEqual({ sha: SHA, state, description });
  });

  it('posts nothing for a cycle that says nothing of its revision, or without a commit hash', () => {
    expect(commitStatusOf(outcome({ result: 'superseded' }))).toBeUndefined();
    expect(commitStatusOf(outcome({ result: 'standby' }))).toBeUndefined();
    expect(commitStatusOf(outcome({ revision: undefined }))).toBeUndefined();
    expect(commitStatusOf(outcome({ revision: 'rev-12' }))).toBeUndefined();
  });

  it('every result has a decision, each description within GitHub 140 characters', () => {
    for (const result of RECONCILE_RESULTS) {
      const s = commitStatusOf(outcome({ result, errors: 99999, outOfSync: 99999, writes: 99999 }));
      expect(s === undefined || s.description.length <= 140).toBe(true);
    }
  });
});

describe('commitStatusRequest', () => {
  it("speaks each host's dialect", () => {
    const status = { sha: SHA, state: 'failure', description: 'x' } as const;
    expect(commitStatusRequest('github', 'https://api.github.com/repos/o/r/', 'T', status)).toEqual(
      {
        url: `https://api.github.com/repos/o/r/statuses/${SHA}`,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: 'Bearer T',
          'x-github-api-version': '2022-11-28',
        },
        body: '{"state":"failure","description":"x","context":"edgesync"}',
      },
    );
    expect(commitStatusRequest('gitlab', 'https://gl/api/v4/projects/1', 'T', status)).toEqual({
      url: `https://gl/api/v4/projects/1/statuses/${SHA}`,
      headers: { 'private-token': 'T' },
      body: '{"state":"failed","description":"x","name":"edgesync"}',
    });
  });
});

describe('notifyReceivers', () => {
  const token = (name: string) => ({ EDGESYNC_GITHUB_TOKEN: 'gh' })[name];
  it('gives each receiver its own format, bare URLs the default one', () => {
    expect(
      notifyReceivers(
        [
          'https://a.example/x',
          'slack=https://hooks.example/T/B/C',
          'github=https://api.github.com/repos/o/r',
        ],
        'json',
        token,
      ),
    ).toEqual([
      { url: 'https://a.example/x', format: 'json' },
      { url: 'https://hooks.example/T/B/C', format: 'slack' },
      { url: 'https://api.github.com/repos/o/r', format: 'github', token: 'gh' },
    ]);
  });

  it.each([
    [['teams=https://x.example'], /the format is one of json, slack, github, gitlab/],
    [['ftp://x.example/secret'], /--notify must be an http\(s\) URL/],
    [['gitlab=https://gl/api/v4/projects/1'], /set EDGESYNC_GITLAB_TOKEN/],
  ])('refuses %j', (values, message) => {
    expect(() => notifyReceivers(values, 'json', token)).toThrow(message);
  });

  it('never quotes a refused value (a webhook URL carries its token)', () => {
    expect(() => notifyReceivers(['not a url /T/B/secret'], 'json', token)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});
