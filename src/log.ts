/**
 * The one root logger (pino). Modules receive a child logger (`log.child({ module: 'api' })`)
 * from whoever constructs them; nothing imports a global logger. API keys and secrets are
 * redacted by path here, and sensitive values never reach a log call in the first place.
 */
import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { pino } from 'pino';

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
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const base: LoggerOptions = {
    level: options.level ?? 'info',
    base: { name: 'edgesync' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: true, destination: 1 } },
    });
  }
  return pino(base);
}

/** A logger that writes nothing, for commands and tests that do not care. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
