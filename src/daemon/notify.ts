/**
 * Notifications: each `--notify` receiver has its own format. `json` (every daemon event POSTed
 * as JSON) and `slack` (a Slack-compatible incoming-webhook body) hear the events; `github` and
 * `gitlab` post a commit status for the revision each cycle read (./commit-status.ts), once per
 * revision and outcome. Events already mark a
 * condition's start and end (./events.ts), so a receiver hears about a drift once when it starts
 * and once when it clears. Delivery runs beside the reconcile loop, never in it: `send` only
 * queues; each receiver has its own queue, retries with backoff (../retry.ts; a 429's or 503's
 * `Retry-After` is waited for, up to a minute), and a dead receiver is logged, never fatal;
 * `close` ends the waits. Payloads carry event fields only (addresses, reasons, field paths, a
 * resource's readiness and the DNS records it waits for): no secret or key ever. A `json` body
 * is the event itself, its `readiness` and `waiting_for` included; Slack's text is its message,
 * which names the records to create.
 *
 * The HTTP client is the API client's (`createExchange`: the same proxy settings and
 * connection timeouts), and like it never follows a redirect: a receiver answering 3xx is told
 * nothing more, since following would re-post the event to wherever the answer points. Every
 * value of a body is escaped for its format: JSON's own escaping, and in Slack's text `&`, `<`
 * and `>` (a resource name or label cannot become a `<!channel>` mention or a disguised link).
 */
import { createExchange, type Exchange } from '../api/index.js';
import { ConfigError, EdgesyncError, errorMessage, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { parseRetryAfter, realSleep, retrying, type Sleep } from '../retry.js';
import {
  COMMIT_STATUS_FORMATS,
  COMMIT_STATUS_TOKEN_ENV,
  type CommitStatusFormat,
  type CycleOutcome,
  commitStatusOf,
  commitStatusRequest,
} from './commit-status.js';
import type { DaemonEvent } from './events.js';

/** The formats of the receivers that hear the daemon's events. */
export const EVENT_FORMATS = ['json', 'slack'] as const;
export type EventFormat = (typeof EVENT_FORMATS)[number];
export type NotifyFormat = EventFormat | CommitStatusFormat;
export const NOTIFY_FORMATS: readonly NotifyFormat[] = [...EVENT_FORMATS, ...COMMIT_STATUS_FORMATS];

/** One `--notify` receiver. */
export type NotifyReceiver =
  | { readonly url: string; readonly format: EventFormat }
  /** A Git host's repository (or project) API URL, and the token its API takes. */
  | { readonly url: string; readonly format: CommitStatusFormat; readonly token: string };

/**
 * The receivers of `--notify` values: `URL` (in `defaultFormat`, `--notify-format`'s) or
 * `FORMAT=URL` (`slack=https://hooks.slack.com/...`, `github=https://api.github.com/repos/O/R`,
 * `gitlab=https://gitlab.example.com/api/v4/projects/42`). A Git host's receiver needs its token
 * (`COMMIT_STATUS_TOKEN_ENV`), read through `token`.
 */
export function notifyReceivers(
  values: readonly string[],
  defaultFormat: string,
  token: (name: string) => string | undefined,
): NotifyReceiver[] {
  const isFormat = (f: string): f is NotifyFormat =>
    (NOTIFY_FORMATS as readonly string[]).includes(f);
  if (!isFormat(defaultFormat)) {
    throw new UsageError(
      `--notify-format must be one of ${NOTIFY_FORMATS.join(', ')}, got "${defaultFormat}"`,
    );
  }
  return values.map((text): NotifyReceiver => {
    const named = /^([a-z]+)=(.*)$/s.exec(text);
    const format = named?.[1] ?? defaultFormat;
    const url = named?.[2] ?? text;
    if (!isFormat(format)) {
      throw new UsageError(
        `--notify ${format}=...: the format is one of ${NOTIFY_FORMATS.join(', ')}`,
      );
    }
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(url).protocol);
    } catch {
      ok = false;
    }
    // The value may carry a webhook's token: never quoted.
    if (!ok)
      throw new UsageError(
        `--notify must be an http(s) URL (or FORMAT=URL, FORMAT one of ${NOTIFY_FORMATS.join(', ')})`,
      );
    if (format === 'json' || format === 'slack') return { url, format };
    const name = COMMIT_STATUS_TOKEN_ENV[format];
    const value = token(name)?.trim();
    if (value === undefined || value === '') {
      throw new ConfigError(
        `--notify ${format}=...: set ${name} to a token that may post commit statuses`,
      );
    }
    return { url, format, token: value };
  });
}

export interface NotifierOptions {
  readonly receivers: readonly NotifyReceiver[];
  readonly logger?: Logger | undefined;
  /** Attempts per event and receiver (default 5), and the first backoff (default 1 s, doubling). */
  readonly attempts?: number;
  readonly backoffMs?: number;
  readonly timeoutMs?: number;
  /** The waits between attempts (tests inject one); `close` aborts them. */
  readonly sleep?: Sleep;
  /** The HTTP client (default: a `createExchange()` of its own, closed by `close`). */
  readonly exchange?: Exchange | undefined;
}

export interface Notifier {
  send(event: DaemonEvent): void;
  /** A finished cycle: the commit-status receivers post its revision's status. */
  sendCycle(outcome: CycleOutcome): void;
  /** Resolves when every queue is empty (tests, shutdown). */
  idle(): Promise<void>;
  /** Closes the notifier's own connections (an injected exchange is left to its owner). */
  close(): Promise<void>;
}

/** The body for one event, every value escaped for the receiver's format. */
export function notificationBody(event: DaemonEvent, format: EventFormat): unknown {
  // JSON.stringify escapes every value of this one.
  if (format === 'json') return { source: 'edgesync', ...event };
  const where = event.resource === null ? '' : ` ${slackEscape(event.resource)}`;
  const rev =
    event.revision === null ? '' : ` (revision ${slackEscape(event.revision.slice(0, 12))})`;
  return {
    text: `edgesync ${slackEscape(event.type)}${where}: ${slackEscape(event.message)}${rev}`,
  };
}

/**
 * A value as Slack's message text shows it literally: `&`, `<` and `>` are its only control
 * characters (`<!channel>`, `<@U123>`, `<https://x|label>`), escaped as Slack documents.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The URL as log lines show it: scheme and host only. Credentials, query and path stay out: an
 * incoming-webhook URL carries its token in the path (`/services/T000/B000/XXXX`).
 */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '/' : '/…'}`;
  } catch {
    return '(invalid URL)';
  }
}

/** One POST a receiver's queue holds: its body, and where and how when not the receiver's URL. */
interface Delivery {
  readonly body: string;
  /** For log lines: the event type, or the commit status. */
  readonly event: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Queue {
  readonly items: Delivery[];
  running: Promise<void> | undefined;
  /** The last commit status queued (commit-status receivers). */
  last: string;
}

/** The longest `Retry-After` a receiver is waited for: its queue waits meanwhile. */
const MAX_RETRY_AFTER_MS = 60_000;

export function createNotifier(options: NotifierOptions): Notifier {
  const attempts = options.attempts ?? 5;
  const backoff = options.backoffMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const sleep = options.sleep ?? realSleep;
  const closing = new AbortController();
  const queues = new Map<NotifyReceiver, Queue>();
  const owned = options.exchange === undefined ? createExchange() : undefined;
  const http = (options.exchange ?? (owned as Exchange)).exchange;
  // One receiver, one event at a time: no jitter to spread, so the waits are predictable.
  const loop = {
    attempts,
    backoff: { baseMs: backoff, maxMs: Number.POSITIVE_INFINITY, jitter: 'none' },
    maxRetryAfterMs: MAX_RETRY_AFTER_MS,
    sleep,
    signal: closing.signal,
  } as const;

  /** One POST to a receiver (with retries); `event` names it in log lines. */
  async function deliver(url: string, item: Delivery): Promise<void> {
    const { event } = item;
    const warn = (fields: object, message: string) =>
      options.logger?.warn({ url: safeUrl(url), ...fields, event }, message);
    try {
      await retrying<void>(loop, async () => {
        let res: Awaited<ReturnType<typeof post>>;
        try {
          res = await post(url, item);
        } catch (err) {
          return { done: false, failure: err };
        }
        if (res.status >= 200 && res.status < 300) return { done: true, value: undefined };
        if (res.status >= 300 && res.status < 400) {
          warn(
            { status: res.status },
            'notification answered with a redirect, which is never followed; not delivered',
          );
          return { done: true, value: undefined };
        }
        if (res.status < 500 && res.status !== 429) {
          warn({ status: res.status }, 'notification refused; not retried');
          return { done: true, value: undefined };
        }
        return {
          done: false,
          failure: new EdgesyncError('ES_NETWORK', `answered HTTP ${res.status}`),
          retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()),
        };
      });
    } catch (err) {
      warn({ err: errorMessage(err) }, 'notification not delivered');
    }
  }

  function post(url: string, item: Delivery) {
    return http({
      method: 'POST',
      url: item.url ?? url,
      headers: { 'content-type': 'application/json', 'user-agent': 'edgesync', ...item.headers },
      body: item.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  function drain(receiver: NotifyReceiver): void {
    const q = queues.get(receiver);
    if (q === undefined || q.running !== undefined) return;
    q.running = (async () => {
      for (let e = q.items.shift(); e !== undefined; e = q.items.shift()) {
        await deliver(receiver.url, e);
      }
    })().finally(() => {
      q.running = undefined;
      if (q.items.length > 0) drain(receiver);
    });
  }

  function enqueue(receiver: NotifyReceiver, q: Queue, item: Delivery): void {
    q.items.push(item);
    drain(receiver);
  }

  for (const r of options.receivers) queues.set(r, { items: [], running: undefined, last: '' });
  return {
    send(event) {
      for (const [r, q] of queues) {
        if (r.format !== 'json' && r.format !== 'slack') continue;
        const body = JSON.stringify(notificationBody(event, r.format));
        enqueue(r, q, { body, event: event.type });
      }
    },
    sendCycle(outcome) {
      const status = commitStatusOf(outcome);
      if (status === undefined) return;
      for (const [r, q] of queues) {
        if (r.format !== 'github' && r.format !== 'gitlab') continue;
        // Once per revision and outcome: a resync that finds it all the same says nothing new.
        const key = `${status.sha} ${status.state} ${status.description}`;
        if (q.last === key) continue;
        q.last = key;
        const request = commitStatusRequest(r.format, r.url, r.token, status);
        enqueue(r, q, { ...request, event: `commit status ${status.state}` });
      }
    },
    async idle() {
      for (;;) {
        const running = [...queues.values()].map((q) => q.running).filter((r) => r !== undefined);
        if (running.length === 0) return;
        await Promise.all(running);
      }
    },
    close: async () => {
      closing.abort();
      await owned?.close();
    },
  };
}
