/**
 * `--listen` values: `HOST:PORT`, `[IPV6]:PORT` or `:PORT` (all interfaces, as Prometheus
 * exporters accept). Port 0 asks the system for a free port (tests).
 */
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export const DEFAULT_LISTEN: ListenAddress = { host: '127.0.0.1', port: 9090 };

const HOSTNAME =
  /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function parseListenAddress(text: string, flag = '--listen'): ListenAddress {
  const fail = (why: string) =>
    new UsageError(
      `${flag}: ${why} in "${text}" (expected HOST:PORT, e.g. 127.0.0.1:9090 or :9090)`,
    );
  const trimmed = text.trim();
  let host: string;
  let portText: string;
  if (trimmed.startsWith('[')) {
    const end = trimmed.indexOf(']');
    if (end < 0 || trimmed[end + 1] !== ':') throw fail('bad IPv6 address');
    host = trimmed.slice(1, end);
    portText = trimmed.slice(end + 2);
    if (isIP(host) !== 6) throw fail('bad IPv6 address');
  } else {
    const colon = trimmed.lastIndexOf(':');
    if (colon < 0) throw fail('missing port');
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
    if (host === '') host = '0.0.0.0';
    else if (host.includes(':')) throw fail('IPv6 addresses need brackets');
    else if (isIP(host) === 0 && !HOSTNAME.test(host)) throw fail('bad host');
  }
  if (!/^\d{1,5}$/.test(portText)) throw fail('bad port');
  const port = Number(portText);
  if (port > 65_535) throw fail('port out of range');
  return { host, port };
}
