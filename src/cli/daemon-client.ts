/**
 * The command line's side of a running daemon's HTTP surface (src/daemon/http.ts): `status`
 * reads `GET /status` and the pages of `GET /status/resources`, `reconcile`, `suspend` and `resume` call its control endpoints with the
 * control token. The daemon is `--url URL`, else `EDGESYNC_DAEMON_URL`, else the local one on
 * the default `--listen` address. The token goes with the control requests only, redirects are
 * never followed (a token must not travel to another address), and the body is an empty JSON
 * object, which is all the control endpoints accept.
 */
import { z } from 'zod';
import { DEFAULT_LISTEN } from '../daemon/listen.js';
import { RESOURCE_STATES } from '../daemon/types.js';
import { parseDuration } from '../duration.js';
import { RECONCILE_RESULTS, TRIGGER_REASONS } from '../engine/contract.js';
import { DaemonError, errorMessage, UsageError } from '../errors.js';
import { summarySchema } from '../plan/model.js';
import type { CliContext } from './context.js';
import { controlTokenFrom } from './control-token.js';
import { ExitCode } from './exit.js';
import { commandOptions, flagDefault } from './flag-table.js';
import { durationFlag, parseCommandArgs } from './flags.js';

const DAEMON_URL_ENV = 'EDGESYNC_DAEMON_URL';

/** The local daemon: `edgesync run`'s default `--listen`. */
export const LOCAL_DAEMON_URL = `http://${DEFAULT_LISTEN.host}:${DEFAULT_LISTEN.port}`;

export interface DaemonTarget {
  readonly base: URL;
  readonly token: string | undefined;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** The daemon to call, from the flags and the environment. */
export async function daemonTarget(
  ctx: CliContext,
  values: {
    url?: string | undefined;
    'control-token-file'?: string | undefined;
    timeout?: string | undefined;
  },
): Promise<DaemonTarget> {
  const text = values.url ?? (ctx.env[DAEMON_URL_ENV]?.trim() || LOCAL_DAEMON_URL);
  let base: URL;
  try {
    base = new URL(text);
  } catch (err) {
    throw new UsageError(`--url must be an http(s) URL, got "${text}"`, { cause: err });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new UsageError(`--url must be an http(s) URL, got "${text}"`);
  }
  if (base.username !== '' || base.password !== '') {
    throw new UsageError(
      '--url must not carry credentials: the control token is sent as a bearer token',
    );
  }
  return {
    base,
    token: await controlTokenFrom(ctx, values['control-token-file']),
    timeoutMs: durationFlag(
      'timeout',
      values.timeout,
      parseDuration(flagDefault('status', 'timeout')),
      1,
    ),
    signal: ctx.signal,
  };
}

/** The address as messages show it: scheme, host and port. */
export function shownUrl(base: URL): string {
  return `${base.protocol}//${base.host}`;
}

/** One request to the daemon; its JSON answer. */
async function call(
  target: DaemonTarget,
  method: 'GET' | 'POST',
  pathname: string,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(
    pathname.replace(/^\//, ''),
    target.base.href.endsWith('/') ? target.base : `${target.base.href}/`,
  );
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'edgesync' };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      ...(method === 'POST' ? { body: '{}' } : {}),
      redirect: 'manual',
      signal: AbortSignal.any([target.signal, AbortSignal.timeout(target.timeoutMs)]),
    });
  } catch (err) {
    const why =
      (err as Error).name === 'TimeoutError'
        ? `no answer within ${target.timeoutMs} ms`
        : errorMessage((err as { cause?: unknown }).cause ?? err);
    throw new DaemonError(
      `cannot reach the daemon at ${shownUrl(target.base)} (${why}): is "edgesync run" running there? (--url URL)`,
      { cause: err },
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

/** The daemon's refusal in words (401, 403, a redirect, another answer). */
function refusal(target: DaemonTarget, what: string, status: number, body: unknown): DaemonError {
  const said = z.object({ error: z.string() }).safeParse(body);
  const where = shownUrl(target.base);
  if (status === 401) {
    return new DaemonError(
      `${where} refused ${what}: ${target.token === undefined ? 'it needs the control token (--control-token-file FILE or EDGESYNC_CONTROL_TOKEN)' : 'wrong control token'}`,
      { status },
    );
  }
  if (status === 403) {
    return new DaemonError(
      `${where} refused ${what}${said.success ? `: ${said.data.error}` : ''}`,
      { status },
    );
  }
  if (status >= 300 && status < 400) {
    return new DaemonError(`${where} answered ${what} with a redirect (${status}): not followed`, {
      status,
    });
  }
  return new DaemonError(
    `${where} answered ${what} with HTTP ${status}: is it an edgesync daemon? (--url URL)`,
    { status },
  );
}

/**
 * The parts of the `/status` document (`DaemonStatus`, src/daemon/types.ts) the command line
 * reads, checked at the door (`-o json` prints the document as it came).
 * `test/unit/cli/daemon-client.test.ts` holds it to the daemon's type.
 */
const stateCountsSchema = z.partialRecord(z.enum(RESOURCE_STATES), z.number());

export const daemonStatusSchema = z.object({
  format_version: z.literal(2),
  dir: z.string(),
  resolved_dir: z.string().nullable(),
  revision: z.string().nullable(),
  ready: z.boolean(),
  in_flight: z.boolean(),
  last_reconcile: z
    .object({
      result: z.enum(RECONCILE_RESULTS),
      reason: z.enum(TRIGGER_REASONS),
      revision: z.string().nullable(),
      at: z.string(),
      duration_ms: z.number(),
      summary: summarySchema,
      writes: z.number(),
      out_of_sync: z.number().nullable(),
    })
    .nullable(),
  last_success_at: z.string().nullable(),
  last_error: z.object({ message: z.string(), at: z.string() }).nullable(),
  diagnostics_by_file: z.record(
    z.string(),
    z
      .array(
        z.object({
          line: z.number(),
          column: z.number(),
          path: z.string(),
          message: z.string(),
          severity: z.enum(['error', 'warning']),
        }),
      )
      .readonly(),
  ),
  warnings: z.array(z.string()).readonly(),
  next_resync_at: z.string().nullable(),
  backoff_ms: z.number(),
  consecutive_failures: z.number(),
  suspended: z.boolean(),
  mode: z.enum(['enforce', 'observe']),
  resource_counts: z.object({
    total: z.number(),
    by_state: stateCountsSchema,
    by_kind: z.record(z.string(), stateCountsSchema),
  }),
});

/** `GET /status/resources` (`ResourcePage`, src/daemon/types.ts), checked likewise. */
export const resourcePageSchema = z.object({
  format_version: z.literal(1),
  total: z.number(),
  offset: z.number(),
  limit: z.number(),
  resources: z
    .array(
      z.object({
        kind: z.string(),
        address: z.string(),
        id: z.string().nullable(),
        state: z.enum(RESOURCE_STATES),
        reason: z.string().nullable(),
        fields: z.array(z.string()).readonly(),
      }),
    )
    .readonly(),
});

export type ResourcePageAnswer = z.output<typeof resourcePageSchema>;

export type DaemonStatusAnswer = z.output<typeof daemonStatusSchema>;

/** `GET /status`: the document as sent, and its checked reading. */
export async function fetchStatus(
  target: DaemonTarget,
): Promise<{ raw: unknown; status: DaemonStatusAnswer }> {
  const { status, body } = await call(target, 'GET', '/status');
  if (status !== 200) throw refusal(target, 'GET /status', status, body);
  const parsed = daemonStatusSchema.safeParse(body);
  if (!parsed.success) {
    throw new DaemonError(
      `${shownUrl(target.base)}/status is not an edgesync daemon's status (format_version 2): is --url right?`,
      { cause: parsed.error },
    );
  }
  return { raw: body, status: parsed.data };
}

/** The most resources one `/status/resources` request asks for (the daemon's maximum). */
const RESOURCES_PER_REQUEST = 1000;

/** Every managed resource, by address: `GET /status/resources`, page after page. */
export async function fetchResources(
  target: DaemonTarget,
): Promise<ResourcePageAnswer['resources']> {
  const out: ResourcePageAnswer['resources'][number][] = [];
  for (;;) {
    const what = `/status/resources?offset=${out.length}&limit=${RESOURCES_PER_REQUEST}`;
    const { status, body } = await call(target, 'GET', what);
    if (status !== 200) throw refusal(target, `GET ${what}`, status, body);
    const parsed = resourcePageSchema.safeParse(body);
    if (!parsed.success) {
      throw new DaemonError(
        `${shownUrl(target.base)}/status/resources is not an edgesync daemon's resource list: is --url right?`,
        { cause: parsed.error },
      );
    }
    out.push(...parsed.data.resources);
    // A cycle between two pages may change the list: a page short of the total still ends it.
    if (parsed.data.resources.length === 0 || out.length >= parsed.data.total) return out;
  }
}

/** The control endpoints and what each answers. */
const CONTROL = {
  reconcile: { path: '/-/reconcile', answer: z.object({ accepted: z.boolean() }).loose() },
  suspend: {
    path: '/-/suspend',
    answer: z.object({ suspended: z.boolean(), changed: z.boolean() }).loose(),
  },
  resume: {
    path: '/-/resume',
    answer: z.object({ suspended: z.boolean(), changed: z.boolean() }).loose(),
  },
} as const;

/** `POST /-/reconcile`: true when accepted (202), false when the daemon is stopping (503). */
export async function requestReconcile(target: DaemonTarget): Promise<boolean> {
  const { path } = CONTROL.reconcile;
  const { status, body } = await call(target, 'POST', path);
  if (status === 503) return false;
  if (status !== 202 || !CONTROL.reconcile.answer.safeParse(body).success) {
    throw refusal(target, `POST ${path}`, status, body);
  }
  return true;
}

/** `POST /-/suspend` or `/-/resume`: whether the daemon's state changed. */
export async function setSuspended(
  target: DaemonTarget,
  which: 'suspend' | 'resume',
): Promise<{ changed: boolean }> {
  const { path, answer } = CONTROL[which];
  const { status, body } = await call(target, 'POST', path);
  const parsed = answer.safeParse(body);
  if (status !== 200 || !parsed.success) throw refusal(target, `POST ${path}`, status, body);
  return { changed: parsed.data.changed };
}

/**
 * The whole of `reconcile`, `suspend` and `resume`: their flags (the same three, ./flag-table.ts), `--help`, the
 * daemon's address and token, then `act` with the target and its address as shown (no
 * credentials). `act` returns the command's exit code.
 */
export async function runDaemonCommand(
  ctx: CliContext,
  usage: string,
  act: (target: DaemonTarget, where: string) => Promise<number>,
): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, commandOptions('reconcile'), usage, {
    positionals: false,
  });
  if (values.help) {
    ctx.stdout.write(usage);
    return ExitCode.ok;
  }
  const target = await daemonTarget(ctx, values);
  return act(target, shownUrl(target.base));
}
