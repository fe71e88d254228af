/**
 * Telling the Git host how the revision a cycle read went: a commit status on it, through
 * GitHub's (`POST {repo}/statuses/{sha}`) or GitLab's (`POST {project}/statuses/{sha}`) API.
 * Pure: a cycle's outcome becomes a state (success, failure, pending) and a one-line
 * description made of the result and counts only (never an error's text, which may quote
 * anything), and a receiver's request is built from it. The notifier (./notify.ts) sends it.
 */
import type { PlanSummary, ReconcileResult } from './types.js';

/** The Git hosts a commit status can be posted to. */
export const COMMIT_STATUS_FORMATS = ['github', 'gitlab'] as const;
export type CommitStatusFormat = (typeof COMMIT_STATUS_FORMATS)[number];

/** Where each host's token is read from (the environment of `edgesync run`). */
export const COMMIT_STATUS_TOKEN_ENV: Readonly<Record<CommitStatusFormat, string>> = {
  github: 'EDGESYNC_GITHUB_TOKEN',
  gitlab: 'EDGESYNC_GITLAB_TOKEN',
};

/** What a finished cycle says about its revision. */
export interface CycleOutcome {
  readonly result: ReconcileResult;
  /** The revision the cycle read (git-sync's commit, a checkout's HEAD), if known. */
  readonly revision: string | undefined;
  readonly summary: PlanSummary;
  readonly writes: number;
  /** Resources left differing (drift), if the cycle planned. */
  readonly outOfSync: number | undefined;
  /** Manifest errors of an invalid set. */
  readonly errors: number;
}

export type CommitState = 'success' | 'failure' | 'pending';

export interface CommitStatus {
  readonly sha: string;
  readonly state: CommitState;
  readonly description: string;
}

/** A full commit hash (SHA-1, or SHA-256 for a repository that uses it). */
const COMMIT_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The context (GitHub) or name (GitLab) the status is posted under. */
export const STATUS_CONTEXT = 'edgesync';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * The status a cycle's outcome posts, or undefined when there is none to post: no commit hash
 * (a plain directory), or a cycle that says nothing of the revision (superseded by a newer one,
 * a standby replica's).
 */
export function commitStatusOf(outcome: CycleOutcome): CommitStatus | undefined {
  const sha = outcome.revision?.toLowerCase();
  if (sha === undefined || !COMMIT_SHA.test(sha)) return undefined;
  const s = outcome.summary;
  const status = (state: CommitState, description: string): CommitStatus => ({
    sha,
    state,
    description,
  });
  switch (outcome.result) {
    case 'converged':
      return status('success', 'in sync: nothing to change');
    case 'changed':
      return status(
        'success',
        `applied: ${s.create} created, ${s.update + s.adopt} updated, ${s.delete} deleted (${plural(outcome.writes, 'write')})`,
      );
    case 'drift':
      return status(
        'pending',
        `not applied yet: ${plural(outcome.outOfSync ?? 0, 'resource')} differ (observe mode, suspended or blocked)`,
      );
    case 'invalid':
      return status(
        'failure',
        `invalid manifests: ${plural(outcome.errors, 'error')} ("edgesync status" lists them)`,
      );
    case 'error':
    case 'lost_leadership':
      return status('failure', 'reconcile failed ("edgesync status" says why)');
    case 'superseded':
    case 'standby':
      return undefined;
  }
}

/** One request to the Git host. */
export interface CommitStatusRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The request posting `status` to a receiver: `base` is the repository's API URL
 * (`https://api.github.com/repos/OWNER/REPO`) or the project's
 * (`https://gitlab.example.com/api/v4/projects/ID`).
 */
export function commitStatusRequest(
  format: CommitStatusFormat,
  base: string,
  token: string,
  status: CommitStatus,
): CommitStatusRequest {
  const url = `${base.replace(/\/+$/, '')}/statuses/${status.sha}`;
  if (format === 'github') {
    return {
      url,
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${token}`,
        'x-github-api-version': '2022-11-28',
      },
      body: JSON.stringify({
        state: status.state,
        description: status.description,
        context: STATUS_CONTEXT,
      }),
    };
  }
  return {
    url,
    headers: { 'private-token': token },
    body: JSON.stringify({
      state: status.state === 'failure' ? 'failed' : status.state,
      description: status.description,
      name: STATUS_CONTEXT,
    }),
  };
}
