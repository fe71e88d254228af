import { describe, expect, it } from 'vitest';
import { parseListenAddress } from '../../../src/daemon/listen.js';
import { UsageError } from '../../../src/errors.js';

describe('parseListenAddress', () => {
  it.each([
    ['127.0.0.1:9090', '127.0.0.1', 9090],
    ['0.0.0.0:9090', '0.0.0.0', 9090],
    [':9090', '0.0.0.0', 9090],
    ['localhost:0', 'localhost', 0],
    ['[::1]:9090', '::1', 9090],
    ['[::]:80', '::', 80],
    ['metrics.internal:65535', 'metrics.internal', 65535],
  ])('%s -> %s port %i', (text, host, port) => {
    expect(parseListenAddress(text)).toEqual({ host, port });
  });

  it.each([
    ['9090', 'missing port'],
    ['127.0.0.1', 'missing port'],
    ['127.0.0.1:', 'bad port'],
    ['127.0.0.1:http', 'bad port'],
    ['127.0.0.1:65536', 'port out of range'],
    ['127.0.0.1:-1', 'bad port'],
    ['::1:9090', 'IPv6 addresses need brackets'],
    ['[::1:9090', 'bad IPv6 address'],
    ['[nope]:9090', 'bad IPv6 address'],
    ['bad host!:9090', 'bad host'],
  ])('refuses %s (%s)', (text, why) => {
    expect(() => parseListenAddress(text)).toThrow(UsageError);
    expect(() => parseListenAddress(text)).toThrow(why);
  });
});
