/**
 * `edgesync server`: runs the local Edge API server until SIGINT/SIGTERM. Parses flags and the
 * environment, prints the base URL and the accepted key(s) on stderr (the issue requires the
 * server to show its own keys, so a user can copy one), and closes cleanly (exit 0).
 */
import { UsageError } from '../../errors.js';
import { createLogger, parseLogLevel } from '../../log.js';
import {
  generateApiKey,
  parseLatency,
  parseRate,
  parseRateLimit,
  type StartServerOptions,
  startServer,
} from '../../server/index.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit.js';
import { commandUsage } from '../flag-help.js';
import { commandOptions, flagDefault } from '../flag-table.js';
import { parseCommandArgs } from '../flags.js';

export const summary = 'run the local Edge API server (in memory, or persistent with --data)';

export const USAGE = commandUsage('server', {
  synopsis: 'server [options]',
  footer: `
Environment: EDGESYNC_LOG_LEVEL (default info; JSON logs on stdout).
`,
});

export async function run(ctx: CliContext): Promise<number> {
  const options = parseOptions(ctx);
  if (options === 'help') {
    ctx.stdout.write(USAGE);
    return ExitCode.ok;
  }
  const generated = options.apiKeys.length === 0;
  if (generated) options.apiKeys.push(generateApiKey());
  const logger = createLogger({
    level: parseLogLevel(ctx.env.EDGESYNC_LOG_LEVEL, 'EDGESYNC_LOG_LEVEL'),
    destination: ctx.stdout,
  });
  const server = await startServer({
    ...options,
    logger,
    onSalvage: (report) =>
      ctx.stderr.write(
        `edgesync server: salvaged ${report.file}: kept ${report.kept} record(s), skipped ${report.skipped} damaged; the damaged file is ${report.movedTo}\n`,
      ),
  });
  const keys = server.apiKeys.map((k) => `  ${k}`).join('\n');
  ctx.stderr.write(
    `edgesync server: listening on ${server.url}${options.dataDir ? ` (data in ${options.dataDir})` : ' (in memory)'}\n` +
      `edgesync server: ${generated ? 'generated API key' : 'accepted API key(s)'}:\n${keys}\n`,
  );
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  ctx.stderr.write('edgesync server: shutting down\n');
  await server.close();
  return ExitCode.ok;
}

type ParsedOptions = Omit<StartServerOptions, 'logger'> & { apiKeys: string[] };

function parseOptions(ctx: CliContext): ParsedOptions | 'help' {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS, USAGE, { positionals: false });
  if (values.help) return 'help';
  const out: ParsedOptions = { apiKeys: [] };
  out.host = values.host ?? flagDefault('server', 'host');
  if (values.port !== undefined) {
    const port = /^\d{1,5}$/.test(values.port) ? Number(values.port) : -1;
    if (port < 0 || port > 65_535)
      throw usage(`--port must be 0..65535, got ${JSON.stringify(values.port)}`);
    out.port = port;
  }
  if (values.data !== undefined) {
    if (values.data === '') throw usage('--data needs a directory');
    out.dataDir = values.data;
  }
  if (values.salvage) {
    if (out.dataDir === undefined) throw usage('--salvage needs --data');
    out.salvage = true;
  }
  if (values['public-url'] !== undefined) {
    const text = values['public-url'];
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(text).protocol);
    } catch {
      ok = false;
    }
    if (!ok)
      throw usage(`--public-url must be an absolute http(s) URL, got ${JSON.stringify(text)}`);
    out.publicUrl = text.replace(/\/+$/, '');
  }
  if (values['rate-limit'] !== undefined) {
    const limit = parseRateLimit(values['rate-limit']);
    if (limit === undefined) throw usage('--rate-limit must look like N/Ws, e.g. 120/60s');
    out.rateLimit = limit;
  }
  if (values.latency !== undefined) {
    const latency = parseLatency(values.latency);
    if (latency === undefined) throw usage('--latency must be MS or MIN-MAX (milliseconds)');
    out.latencyMs = latency;
  }
  for (const [flag, key] of [
    ['fault-rate', 'faultRate'],
    ['reset-rate', 'resetRate'],
  ] as const) {
    const text = values[flag];
    if (text === undefined) continue;
    const rate = parseRate(text);
    if (rate === undefined) throw usage(`--${flag} must be a number from 0 to 1`);
    out[key] = rate;
  }
  if (values['read-only-edges'] && values['no-edge-access']) {
    throw usage('--read-only-edges and --no-edge-access exclude each other');
  }
  if (values['read-only-edges']) out.edgeAccess = 'read-only';
  if (values['no-edge-access']) out.edgeAccess = 'no-access';
  if (values['require-reserved-domains']) out.requireReservedDomains = true;
  if (values['cnames-created']) out.dns = { cnamesCreated: 'all' };
  const agents = values['agent-endpoint'] ?? [];
  if (agents.length > 0) out.agentEndpoints = agents.map((url) => ({ url }));
  const fromEnv = (ctx.env.EDGESYNC_SERVER_API_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  for (const key of [...(values['api-key'] ?? []), ...fromEnv]) {
    if (/\s/.test(key) || key === '') throw usage('API keys may not be empty or contain spaces');
    if (!out.apiKeys.includes(key)) out.apiKeys.push(key);
  }
  return out;
}

export const OPTIONS = commandOptions('server');

function usage(message: string): UsageError {
  return new UsageError(`${message} (see "edgesync server --help")`);
}
