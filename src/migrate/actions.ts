/**
 * Traffic-policy actions for the modules that map one to one (TLS termination, headers,
 * compression), and the shapes of rules and actions the migration writes. Pure.
 */
import type { FieldPath } from '../manifest/paths.js';
import type { Emit, Source } from './source.js';

export interface Action {
  type: string;
  config?: Record<string, unknown>;
}

export interface Rule {
  name: string;
  expressions?: string[];
  actions: Action[];
}

interface TlsTermination {
  readonly enabled: boolean;
  readonly terminate_at?: string | undefined;
  readonly min_version?: string | undefined;
}

interface MutualTls {
  readonly enabled: boolean;
  readonly certificate_authority_ids: readonly string[];
}

/**
 * One `terminate-tls` for the edge's TLS termination and mutual TLS, or none when TLS passes
 * through (`terminate_at` upstream or agent) or nothing is set. TLS 1.0 and 1.1 have no equivalent: the
 * endpoint then accepts 1.2 and up, which refuses old clients (stricter, so a warning). The
 * minimum version and the CA IDs stay references when written as such; `terminate_at` decides
 * whether there is an action at all, so it cannot be one.
 */
export function terminateTls(
  edge: {
    readonly tls_termination?: TlsTermination | undefined;
    readonly mutual_tls?: MutualTls | undefined;
  },
  source: Source,
  emit: Emit,
): Action | undefined {
  const { tls_termination: termination, mutual_tls: mutual } = edge;
  const path: FieldPath = ['tls_termination'];
  if (source.refused([...path, 'terminate_at'], 'the choice of a terminate-tls action', emit)) {
    return undefined;
  }
  const terminates =
    termination?.enabled === true && (termination.terminate_at ?? 'edge') === 'edge';
  const mtls = mutual?.enabled === true;
  if (!terminates && !mtls) return undefined;
  const config: Record<string, unknown> = {};
  const min = terminates ? termination.min_version : undefined;
  if (min === '1.0' || min === '1.1') {
    emit(
      [...path, 'min_version'],
      'warning',
      `TLS ${min} has no equivalent: the endpoint accepts TLS 1.2 and up`,
    );
    config.min_version = '1.2';
  } else if (min !== undefined) {
    config.min_version = source.keep([...path, 'min_version'], min);
  }
  if (mtls) {
    config.mutual_tls_certificate_authorities = source.keep(
      ['mutual_tls', 'certificate_authority_ids'],
      mutual.certificate_authority_ids,
    );
    config.mutual_tls_verification_strategy = 'require-and-verify';
  }
  return { type: 'terminate-tls', config };
}

export function compressAction(): Action {
  return { type: 'compress-response', config: { algorithms: ['gzip', 'deflate'] } };
}

const HEADERS_PER_ACTION = 10;

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += HEADERS_PER_ACTION)
    out.push(list.slice(i, i + HEADERS_PER_ACTION));
  return out;
}

interface Headers {
  readonly enabled: boolean;
  readonly add?: Readonly<Record<string, string>> | undefined;
  readonly remove?: readonly string[] | undefined;
}

/** `remove-headers` then `add-headers`, ten names an action; values written as references stay so. */
export function headerActions(
  headers: Headers | undefined,
  path: FieldPath,
  source: Source,
  emit: Emit,
): Action[] | undefined {
  if (!headers?.enabled) return undefined;
  const removed = (headers.remove ?? []).filter(
    (_, i) => !source.refused([...path, 'remove', i], 'a header name', emit),
  );
  const actions: Action[] = chunks(removed).map((names) => ({
    type: 'remove-headers',
    config: { headers: names.map((n) => n.toLowerCase()) },
  }));
  const added = Object.keys(headers.add ?? {}).filter((name) => {
    if (name.toLowerCase() !== 'user-agent') return true;
    emit(
      [...path, 'add', name],
      'warning',
      'add-headers may not set user-agent: this header is dropped',
    );
    return false;
  });
  for (const names of chunks(added)) {
    const config: Record<string, unknown> = {};
    for (const name of names)
      config[name.toLowerCase()] = source.keep([...path, 'add', name], headers.add![name]);
    actions.push({ type: 'add-headers', config: { headers: config } });
  }
  return actions;
}

/** Seconds as the policy's duration string: the largest unit that divides it (`90s`, `15m`, `1h`). */
export function duration(seconds: number): string {
  if (seconds > 0 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds > 0 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}
