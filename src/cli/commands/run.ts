/**
 * `edgesync run [DIR]`: the long-running controller. Wires the daemon (triggers, git-sync link,
 * HTTP endpoints, backoff; src/daemon) to the reconcile step (src/engine/) and the API
 * client. With no API configured it starts the local Edge API server in-process, persisted
 * under the state directory, so `npm start` works on a fresh clone with nothing to set up.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveApiConfig } from '../../api/index.js';
import { isLoopbackHost } from '../../daemon/control.js';
import {
  collectWhenGrown,
  createDaemon,
  createDaemonMetrics,
  DAEMON_DEFAULTS,
  DAEMON_NODE_FLAGS,
  DEFAULT_LISTEN,
  fullGarbageCollector,
  type ListenAddress,
  missingDaemonFlags,
  parseListenAddress,
} from '../../daemon/index.js';
import { createNotifier, notifyReceivers } from '../../daemon/notify.js';
import { checkMaxDeletes, createReconciler, DEFAULT_CONCURRENCY } from '../../engine/index.js';
import { UsageError } from '../../errors.js';
import { LEASE_DEFAULTS, leaseTimingsProblem, startLeaderElection } from '../../lease/setup.js';
import { createLogger, type Logger, parseLogLevel } from '../../log.js';
import { heldCredentials } from '../../manifest/own-credentials.js';
import { createValueMask } from '../../manifest/secrets.js';
import { makeDirectory } from '../../mkdir.js';
import type { RunningServer } from '../../server/index.js';
import { createAccountClient } from '../client.js';
import type { CliContext } from '../context.js';
import { controlTokenFrom } from '../control-token.js';
import {
  clearEmbeddedApi,
  DEFAULT_STATE_DIR,
  KEY_FILE,
  recordEmbeddedApi,
} from '../embedded-api.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions, flagDefault } from '../flag-table.js';
import {
  clientBudget,
  durationFlag,
  excludeGlobs,
  manifestDirArg,
  manifestEnv,
  parseCommandArgs,
  rateLimitFlag,
  secretDirs,
  shareFlag,
  wholeNumber,
} from '../flags.js';
import { type ChosenOwner, chosenOwner, ownerOrDefault, requireOwner } from '../owner.js';

export const summary = 'run the controller: watch the manifests and keep the live account matching';

export const USAGE = commandUsage('run', {
  synopsis: 'run [DIR] [options]',
  about: `
Watches the manifests under DIR (default: $EDGESYNC_DIR, else the current directory; may be a
git-sync symlink) and reconciles the live account on every change, every --interval, and on
POST /-/reconcile. Without --api-url / EDGESYNC_API_URL it starts the local Edge API server
in-process (state under --state-dir) and reconciles against it.
`,
  footer: `
durations: 250ms, 60s, 5m, 1h30m. Exit: 0 after a clean shutdown, 1 error, 64 usage error.
`,
});

export const OPTIONS = commandOptions('run');

/** The embedded server's key lives in the state directory (0600), stable across restarts. */
async function embeddedKey(stateDir: string, generateApiKey: () => string): Promise<string> {
  const file = path.join(stateDir, KEY_FILE);
  try {
    const key = (await readFile(file, 'utf8')).trim();
    if (key !== '') return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = generateApiKey();
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return key;
}

async function startEmbedded(
  stateDir: string,
  port: number,
  logger: Logger,
): Promise<{ server: RunningServer; apiKey: string; portTaken: boolean }> {
  // Loaded only for the embedded server: a daemon against a real API does not hold its code.
  const { generateApiKey, startServer } = await import('../../server/index.js');
  await makeDirectory(path.join(stateDir, 'server'));
  const apiKey = await embeddedKey(stateDir, generateApiKey);
  const options = {
    apiKeys: [apiKey],
    host: '127.0.0.1',
    dataDir: path.join(stateDir, 'server'),
    logger,
  };
  try {
    return { server: await startServer({ ...options, port }), apiKey, portTaken: false };
  } catch (err) {
    // Another process holds the port: any free port will do for an embedded server, and the
    // caller says so beside the URL (commands copied from the docs name the usual port).
    // (startServer wraps the listen error in a ConfigError: the errno code is on its cause.)
    const cause = (err as { cause?: unknown }).cause as NodeJS.ErrnoException | undefined;
    const inUse =
      cause?.code === 'EADDRINUSE' || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    if (!inUse || port === 0) throw err;
    logger.warn({ port }, 'embedded server port in use; using a free port instead');
    return { server: await startServer({ ...options, port: 0 }), apiKey, portTaken: true };
  }
}

type RunValues = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** `--notify` receivers (and EDGESYNC_NOTIFY), each with its format (`--notify-format`'s default). */
function notifySettings(values: RunValues, env: CliContext['env']) {
  const texts = [
    ...(values.notify ?? []),
    ...(env.EDGESYNC_NOTIFY ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== ''),
  ];
  return {
    receivers: notifyReceivers(texts, values['notify-format'] ?? 'json', (name) => env[name]),
  } as const;
}

function modeFlag(mode: string): 'enforce' | 'observe' {
  if (mode !== 'enforce' && mode !== 'observe') {
    throw new UsageError(`--mode must be enforce or observe, got "${mode}"`);
  }
  return mode;
}

/** The Lease timings, checked only when leader election is on. */
function leaseSettings(values: RunValues) {
  const timings = {
    leaseDurationMs: durationFlag(
      'lease-duration',
      values['lease-duration'],
      LEASE_DEFAULTS.leaseDurationMs,
      1,
    ),
    renewDeadlineMs: durationFlag(
      'renew-deadline',
      values['renew-deadline'],
      LEASE_DEFAULTS.renewDeadlineMs,
      1,
    ),
    retryPeriodMs: durationFlag(
      'retry-period',
      values['retry-period'],
      LEASE_DEFAULTS.retryPeriodMs,
      1,
    ),
  };
  const problem = values['leader-elect'] ? leaseTimingsProblem(timings) : undefined;
  if (problem !== undefined) throw new UsageError(problem);
  return timings;
}

/**
 * Every flag, checked before anything starts (the embedded server prints its key): a bad flag
 * is a usage error, not a crash after a half start.
 */
async function runSettings(ctx: CliContext, values: RunValues, dirArg: string | undefined) {
  const dir = path.resolve(ctx.cwd, manifestDirArg(ctx, dirArg));
  // In the order the flags were always checked (the first bad one is the one reported).
  const settings = {
    dir,
    intervalMs: durationFlag('interval', values.interval, DAEMON_DEFAULTS.intervalMs, 1),
    debounceMs: durationFlag('debounce', values.debounce, DAEMON_DEFAULTS.debounceMs),
    graceMs: durationFlag('grace', values.grace, DAEMON_DEFAULTS.graceMs),
    listen:
      values.listen === undefined ? DEFAULT_LISTEN : parseListenAddress(values.listen, '--listen'),
    adminListen: adminListenFlag(values['admin-listen']),
    controlToken: await controlTokenFrom(ctx, values['control-token-file']),
    exclude: excludeGlobs(ctx, values.exclude),
    maxDeletes: checkMaxDeletes(wholeNumber('max-deletes', values['max-deletes'], undefined, 0)),
    concurrency: wholeNumber('concurrency', values.concurrency, DEFAULT_CONCURRENCY, 1),
    embeddedPort: wholeNumber(
      'embedded-port',
      values['embedded-port'],
      Number(flagDefault('run', 'embedded-port')),
      0,
    ),
    rateLimit: rateLimitFlag(values['rate-limit']),
    resyncShare: shareFlag(
      'resync-budget',
      values['resync-budget'],
      Number(flagDefault('run', 'resync-budget')),
    ),
    mode: modeFlag(values.mode ?? ctx.env.EDGESYNC_MODE ?? 'enforce'),
    notify: notifySettings(values, ctx.env),
    lease: leaseSettings(values),
    stateDir: path.resolve(ctx.cwd, values['state-dir'] ?? DEFAULT_STATE_DIR),
    configuredApi: resolveApiConfig({
      flags: { apiUrl: values['api-url'], apiKey: values['api-key'] },
      env: ctx.env,
    }),
  } as const;
  const owner = runOwner(
    await chosenOwner(values.owner, ctx.env, dir),
    settings.configuredApi === undefined || settings.mode === 'observe',
    dir,
  ).id;
  return { ...settings, owner };
}

type RunSettings = Awaited<ReturnType<typeof runSettings>>;

/** The root logger: pretty on a terminal, JSON lines on the command's stdout otherwise. */
function rootLogger(ctx: CliContext, values: RunValues, mask: ReturnType<typeof createValueMask>) {
  const pretty = ctx.stdout.isTTY === true && ctx.env.EDGESYNC_LOG_FORMAT !== 'json';
  return createLogger({
    mask: mask.apply,
    level:
      values['log-level'] !== undefined
        ? parseLogLevel(values['log-level'], '--log-level')
        : parseLogLevel(ctx.env.EDGESYNC_LOG_LEVEL, 'EDGESYNC_LOG_LEVEL'),
    pretty,
    // JSON lines go to the command's stdout (process.stdout from bin/; a capture in-process).
    ...(pretty ? {} : { destination: ctx.stdout }),
  });
}

/** The configured API, else the embedded server started for this run (its key printed). */
async function apiOf(
  ctx: CliContext,
  settings: RunSettings,
  root: Logger,
): Promise<{ api: { baseUrl: string; apiKey: string }; embedded: RunningServer | undefined }> {
  if (settings.configuredApi !== undefined) {
    return { api: settings.configuredApi, embedded: undefined };
  }
  const started = await startEmbedded(settings.stateDir, settings.embeddedPort, root);
  // The embedded server is a local sandbox: its URL and key are printed so people can look at
  // it with curl. A configured (real) API key is never printed or logged.
  if (started.portTaken) {
    ctx.stderr.write(
      `edgesync: port ${settings.embeddedPort} is in use by another process; the embedded Edge API listens on port ${new URL(started.server.url).port} instead (--embedded-port chooses it)\n`,
    );
  }
  await recordEmbeddedApi(settings.stateDir, started.server.url);
  ctx.stderr.write(
    `edgesync: no API configured; embedded Edge API at ${started.server.url} (state in ${settings.stateDir})\n` +
      `edgesync: embedded API key: ${started.apiKey}\n`,
  );
  return {
    api: { baseUrl: started.server.url, apiKey: started.apiKey },
    embedded: started.server,
  };
}

/**
 * The full collection run after a cycle that grew the heap, when Node exposes it; the daemon's Node flags it was
 * started without are said once, with what they are for.
 */
function garbageCollector(root: Logger): ReturnType<typeof fullGarbageCollector> {
  const collectGarbage = fullGarbageCollector();
  const missing = missingDaemonFlags().filter(
    (flag) => flag !== '--expose-gc' || collectGarbage === undefined,
  );
  if (missing.length > 0) {
    root.info(
      { missing_node_flags: missing },
      `started without the daemon's Node flags (node ${DAEMON_NODE_FLAGS.join(' ')} ...; npm start and the Docker image pass them): resident memory peaks higher${collectGarbage === undefined ? ', and there is no collection after cycles' : ''}`,
    );
  }
  return collectGarbage;
}

/** `--notify`: the daemon's events sent on to the configured webhooks (closed at the end). */
function notifyFrom(
  settings: RunSettings,
  daemon: ReturnType<typeof daemonOf>,
  root: Logger,
): ReturnType<typeof createNotifier> | undefined {
  if (settings.notify.receivers.length === 0) return undefined;
  const notifier = createNotifier({
    receivers: settings.notify.receivers,
    logger: root.child({ module: 'notify' }),
  });
  daemon.events.subscribe((e) => notifier.send(e));
  daemon.onCycle((outcome) => notifier.sendCycle(outcome));
  return notifier;
}

export async function run(ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, USAGE);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  if (positionals.length > 1)
    throw new UsageError(`expected at most one DIR\nRun "edgesync run --help" for its options.`);
  const settings = await runSettings(ctx, values, positionals[0]);
  const { dir } = settings;
  // Each cycle sets it to the secret values of the manifests and the account: masked in every
  // log line, in the API's messages, and in the status, events and notifications.
  const mask = ctx.mask ?? createValueMask();
  const root = rootLogger(ctx, values, mask);
  const { api, embedded } = await apiOf(ctx, settings, root);

  const collectGarbage = garbageCollector(root);
  const metrics = createDaemonMetrics();
  const budget = clientBudget(settings.rateLimit, ctx.env, embedded !== undefined);
  const client = createAccountClient({
    baseUrl: api.baseUrl,
    apiKey: api.apiKey,
    logger: root.child({ module: 'api' }),
    onResponse: (info) => metrics.observeApiResponse(info),
    // The embedded in-process server has no budget; any other API has one by default.
    budget,
    mask: mask.apply,
  });
  // Leader election first: a refused Lease API stops here, before any cycle.
  const life: Lifecycle = { daemon: undefined, fatal: undefined };
  const election = await electionOf(ctx, values, settings, { metrics, root, life }).catch(
    async (err: unknown) => {
      await client.close();
      if (embedded !== undefined) await clearEmbeddedApi(settings.stateDir);
      await embedded?.close();
      throw err;
    },
  );
  const daemon = daemonOf(ctx, values, settings, {
    client,
    apiKey: api.apiKey,
    mask,
    root,
    election,
    budget,
    metrics,
    life,
    collectGarbage,
  });
  life.daemon = daemon;
  const notifier = notifyFrom(settings, daemon, root);
  try {
    await daemon.start();
    const address = daemon.address;
    if (address !== undefined) {
      const base = `http://${address.host}:${address.port}`;
      ctx.stderr.write(`edgesync: watching ${dir}; status on ${base}/status, a page at ${base}/\n`);
    }
    await daemon.closed;
    if (life.fatal !== undefined) throw life.fatal;
    return ExitCode.ok;
  } finally {
    await daemon.stop();
    // No more writes: release the Lease so a standby takes over within one retry period.
    await election?.elector.stop();
    // stop() waited up to the grace period for the cycle in flight. The client's close()
    // destroys its sockets, a call still hanging past the grace period included, so it returns
    // at once; the bound stays so that no exchange's close can hold the exit (the process exits
    // after `run`).
    await settledWithin(client.close(), CLIENT_CLOSE_WAIT_MS);
    if (notifier !== undefined) await settledWithin(notifier.close(), CLIENT_CLOSE_WAIT_MS);
    if (embedded !== undefined) await clearEmbeddedApi(settings.stateDir);
    await embedded?.close();
    root.flush();
  }
}

/** The daemon of this run, its reconcile step and every option it takes from the flags. */
function daemonOf(
  ctx: CliContext,
  values: RunValues,
  settings: RunSettings,
  deps: {
    readonly client: ReturnType<typeof createAccountClient>;
    readonly apiKey: string;
    readonly mask: ReturnType<typeof createValueMask>;
    readonly root: Logger;
    readonly election: Awaited<ReturnType<typeof electionOf>>;
    readonly budget: ReturnType<typeof clientBudget>;
    readonly metrics: ReturnType<typeof createDaemonMetrics>;
    readonly life: Lifecycle;
    readonly collectGarbage: ReturnType<typeof fullGarbageCollector>;
  },
) {
  const { client, apiKey, mask, root, election, budget, metrics, life, collectGarbage } = deps;
  // Keeps resident memory near one cycle's live set (see src/daemon/memory.ts): checked after
  // each cycle, and between a cycle's writes and the listing that checks them.
  const collect =
    collectGarbage === undefined
      ? undefined
      : collectWhenGrown(collectGarbage, () => process.memoryUsage().heapUsed);
  const reconcile = createReconciler({
    client,
    owner: settings.owner,
    allowEmpty: values['allow-empty'],
    waitForReady: values['no-wait-for-domains'] !== true,
    maxDeletes: settings.maxDeletes,
    concurrency: settings.concurrency,
    env: manifestEnv(ctx, values['secret-digest-key-file']),
    secretDirs: secretDirs(ctx, values['secret-dir']),
    // The API key (configured or the embedded server's) and the control token.
    credentials: heldCredentials({
      apiKey,
      controlToken: settings.controlToken,
    }),
    exclude: settings.exclude,
    mask,
    // The executor adds its own `module` binding.
    logger: root,
    leadership: election?.elector,
    // A file that got smaller is acted on once it stayed unchanged for a debounce.
    settleMs: settings.debounceMs,
    mode: () =>
      life.daemon?.mode() ??
      (settings.mode === 'observe' || values.suspended ? 'observe' : 'enforce'),
    budget,
    beforeVerify: collect,
  });
  return createDaemon({
    dir: settings.dir,
    mask: mask.apply,
    reconcile,
    anticipate: reconcile.anticipate,
    ...(election === undefined
      ? {}
      : {
          leadership: () => ({
            ...election.elector.status(),
            identity: election.identity,
            lease: election.lease,
          }),
        }),
    exclude: settings.exclude,
    intervalMs: settings.intervalMs,
    mode: settings.mode,
    suspended: values.suspended,
    ...(budget === undefined ? {} : { resyncBudget: { share: settings.resyncShare, budget } }),
    debounceMs: settings.debounceMs,
    graceMs: settings.graceMs,
    listen: settings.listen,
    adminListen: settings.adminListen,
    controlToken: settings.controlToken,
    logger: root.child({ module: 'daemon' }),
    metrics,
    signal: ctx.signal,
    ...(collect === undefined ? {} : { afterCycle: collect }),
  });
}

/** What the Lease's callbacks reach once the daemon exists: the daemon, and a fatal Lease error. */
interface Lifecycle {
  daemon: ReturnType<typeof createDaemon> | undefined;
  fatal: Error | undefined;
}

/** `--leader-elect`: the Lease held (or waited for) before any cycle; undefined without it. */
async function electionOf(
  ctx: CliContext,
  values: RunValues,
  settings: RunSettings,
  deps: {
    readonly metrics: ReturnType<typeof createDaemonMetrics>;
    readonly root: Logger;
    readonly life: Lifecycle;
  },
) {
  if (!values['leader-elect']) return undefined;
  const { metrics, life } = deps;
  const election = await startLeaderElection({
    owner: settings.owner,
    name: values['lease-name'],
    namespace: values['lease-namespace'],
    ...settings.lease,
    env: ctx.env,
    logger: deps.root.child({ module: 'lease' }),
    onChange: (leader, transitions) => {
      metrics.observeLeadership(leader, transitions);
      if (leader) life.daemon?.trigger('leader');
    },
    onFatal: (err) => {
      life.fatal = err;
      void life.daemon?.stop();
    },
  });
  metrics.observeLeadership(election.elector.isLeader(), election.elector.status().transitions);
  return election;
}

/**
 * The daemon's owner, read once at start. It may fall back to the default only where it cannot
 * touch anyone else's edges: the embedded sandbox, or `--mode observe` (never writes).
 */
function runOwner(chosen: ChosenOwner | undefined, optional: boolean, dir: string): ChosenOwner {
  return optional ? ownerOrDefault(chosen) : requireOwner(chosen, 'run', dir);
}

/** `--admin-listen`: loopback only, since it serves the control endpoints to anyone reaching it. */
function adminListenFlag(text: string | undefined): ListenAddress | undefined {
  if (text === undefined) return undefined;
  const addr = parseListenAddress(text, '--admin-listen');
  if (!isLoopbackHost(addr.host)) {
    throw new UsageError(
      `--admin-listen must be a loopback address (e.g. 127.0.0.1:9091), got "${text}": it serves the control endpoints without a token`,
    );
  }
  return addr;
}

/** How long closing the API client may take once the daemon has stopped. */
const CLIENT_CLOSE_WAIT_MS = 200;

async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
