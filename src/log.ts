/**
 * The one root logger (pino). Modules receive a child logger (`log.child({ module: 'api' })`)
 * from whoever constructs them; nothing imports a global logger. API keys and secrets are
 * redacted by path here, and sensitive values never reach a log call in the first place.
 */

import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { pino } from 'pino';
import { UsageError } from './errors.js';

export type { Logger };

/** Paths redacted in every log line, whatever the caller passes. */
export const REDACT_PATHS = [
  'authorization',
  'apiKey',
  'api_key',
  '*.authorization',
  '*.apiKey',
  '*.api_key',
  'headers.authorization',
  'req.headers.authorization',
  '*.client_secret',
  '*.secret',
  'client_secret',
  'secret',
];

export interface CreateLoggerOptions {
  readonly level?: string;
  /** Where lines go; defaults to stdout. Tests pass a capture stream. */
  readonly destination?: DestinationStream;
  /** Human-readable output (pino-pretty) instead of JSON, for terminals. */
  readonly pretty?: boolean;
  /**
   * Applied to every serialised line before it is written: the daemon masks the values read
   * from env or file with it (`src/manifest/secrets.ts`), which path-based redaction cannot see.
   */
  readonly mask?: (line: string) => string;
}

/**
 * pino-pretty's settings for a terminal: one line per event (the fields follow the message on
 * the same line, as `key=value` JSON, instead of one indented line each), the clock time only,
 * and without the pid and host name that every line would repeat.
 */
export const PRETTY_OPTIONS = {
  colorize: true,
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,name',
} as const;

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const base: LoggerOptions = {
    level: options.level ?? 'info',
    base: { name: 'edgesync' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const mask = options.mask;
  if (mask !== undefined) base.hooks = { streamWrite: mask };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    return pino({
      ...base,
      // pino-pretty prints the strings it parses back as they are: escape control characters
      // once more in the JSON it is handed, so they reach the terminal as visible escapes.
      hooks: {
        streamWrite: mask === undefined ? escapeForPretty : (line) => escapeForPretty(mask(line)),
      },
      transport: { target: 'pino-pretty', options: { ...PRETTY_OPTIONS, destination: 1 } },
    });
  }
  return pino(base);
}

/** What JSON leaves raw but a terminal may act on: DEL, C1, bidirectional and zero-width marks. */
const RAW_UNSAFE = /[\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/** JSON escapes that stand for a control character (as opposed to `\\"`, `\\\\` and printable `\\u`). */
const CONTROL_ESCAPE = /^(?:[bfnrt]|u00[01][0-9a-fA-F]|u007[fF]|u00[89][0-9a-fA-F])$/;

/**
 * One JSON log line -> the same line whose strings, once parsed, show every control character as
 * an escape: JSON's own `\n`, `\u001b`, ... get their backslash doubled (the line's final
 * newline is outside any string and stays), and the characters JSON leaves raw (DEL, C1,
 * bidirectional controls) become `\\u{..}` text.
 */
export function escapeForPretty(line: string): string {
  return line
    .replace(/\\(["\\/bfnrt]|u[0-9a-fA-F]{4})/g, (whole, seq: string) =>
      CONTROL_ESCAPE.test(seq) ? `\\\\${seq}` : whole,
    )
    .replace(RAW_UNSAFE, (c) => `\\\\u{${c.charCodeAt(0).toString(16)}}`);
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The log level from a flag or `EDGESYNC_LOG_LEVEL`, checked: an unknown level is a usage error
 * (exit 64) listing the levels, not an internal error from deep inside pino.
 */
export function parseLogLevel(value: string | undefined, source: string): string {
  if (value === undefined || value === '') return 'info';
  const level = value.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level;
  throw new UsageError(
    `${source} must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(value)}`,
  );
}

/** A logger that writes nothing, for commands and tests that do not care. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
