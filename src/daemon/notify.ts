/**
 * Notifications: every daemon event POSTed as JSON to each `--notify URL`, or as a
 * Slack-compatible incoming-webhook body (`--notify-format slack`). Events already mark a
 * condition's start and end (./events.ts), so a receiver hears about a drift once when it starts
 * and once when it clears. Delivery runs beside the reconcile loop, never in it: `send` only
 * queues; each receiver has its own queue, retries with backoff, and a dead receiver is logged,
 * never fatal. Payloads carry event fields only (addresses, reasons, field paths): no secret or
 * key ever.
 *
 * The HTTP client is the API client's (`createExchange`: the same proxy settings and
 * connection timeouts), and like it never follows a redirect: a receiver answering 3xx is told
 * nothing more, since following would re-post the event to wherever the answer points. Every
 * value of a body is escaped for its format: JSON's own escaping, and in Slack's text `&`, `<`
 * and `>` (a resource name or label cannot become a `<!channel>` mention or a disguised link).
 */
import { createExchange, type Exchange } from '../api/index.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { DaemonEvent } from './events.js';

export type NotifyFormat = 'json' | 'slack';

export interface NotifierOptions {
  readonly urls: readonly string[];
  readonly format: NotifyFormat;
  readonly logger?: Logger | undefined;
  /** Attempts per event and receiver (default 5), and the first backoff (default 1 s, doubling). */
  readonly attempts?: number;
  readonly backoffMs?: number;
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** The HTTP client (default: a `createExchange()` of its own, closed by `close`). */
  readonly exchange?: Exchange | undefined;
}

export interface Notifier {
  send(event: DaemonEvent): void;
  /** Resolves when every queue is empty (tests, shutdown). */
  idle(): Promise<void>;
  /** Closes the notifier's own connections (an injected exchange is left to its owner). */
  close(): Promise<void>;
}

/** The body for one event, every value escaped for the receiver's format. */
export function notificationBody(event: DaemonEvent, format: NotifyFormat): unknown {
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

export function createNotifier(options: NotifierOptions): Notifier {
  const attempts = options.attempts ?? 5;
  const backoff = options.backoffMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const queues = new Map<string, { items: DaemonEvent[]; running: Promise<void> | undefined }>();
  const owned = options.exchange === undefined ? createExchange() : undefined;
  const http = (options.exchange ?? (owned as Exchange)).exchange;

  async function deliver(url: string, event: DaemonEvent): Promise<void> {
    const body = JSON.stringify(notificationBody(event, options.format));
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const res = await http({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/json', 'user-agent': 'edgesync' },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (res.status >= 200 && res.status < 300) return;
        if (res.status >= 300 && res.status < 400) {
          options.logger?.warn(
            { url: safeUrl(url), status: res.status, event: event.type },
            'notification answered with a redirect, which is never followed; not delivered',
          );
          return;
        }
        if (res.status < 500 && res.status !== 429) {
          options.logger?.warn(
            { url: safeUrl(url), status: res.status, event: event.type },
            'notification refused; not retried',
          );
          return;
        }
      } catch (err) {
        if (attempt === attempts) {
          options.logger?.warn(
            { url: safeUrl(url), err: errorMessage(err), event: event.type },
            'notification not delivered',
          );
          return;
        }
      }
      if (attempt < attempts) await sleep(backoff * 2 ** (attempt - 1));
    }
    options.logger?.warn({ url: safeUrl(url), event: event.type }, 'notification not delivered');
  }

  function drain(url: string): void {
    const q = queues.get(url);
    if (q === undefined || q.running !== undefined) return;
    q.running = (async () => {
      for (let e = q.items.shift(); e !== undefined; e = q.items.shift()) await deliver(url, e);
    })().finally(() => {
      q.running = undefined;
      if (q.items.length > 0) drain(url);
    });
  }

  for (const url of options.urls) queues.set(url, { items: [], running: undefined });
  return {
    send(event) {
      for (const [url, q] of queues) {
        q.items.push(event);
        drain(url);
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
      await owned?.close();
    },
  };
}
