/**
 * The daemon's HTTP listener: binds (a bind failure is a ConfigError naming the address), keeps
 * socket errors from ever crashing the process after start-up, and closes with its keep-alive
 * connections. The routes are ./http.ts.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ListenAddress } from './listen.js';

export interface HttpListener {
  readonly address: ListenAddress;
  close(): Promise<void>;
}

export async function listenHttp(
  addr: ListenAddress,
  handler: RequestListener,
  logger: Logger,
): Promise<HttpListener> {
  const srv = createServer(handler);
  srv.requestTimeout = 30_000;
  srv.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => {
      srv.off('listening', onListening);
      reject(
        new ConfigError(`cannot listen on ${addr.host}:${addr.port}: ${err.message}`, {
          cause: err,
        }),
      );
    };
    const onListening = () => {
      srv.off('error', onError);
      resolve();
    };
    srv.once('error', onError);
    srv.once('listening', onListening);
    srv.listen({ host: addr.host, port: addr.port });
  });
  // After start-up, socket errors must never crash the daemon.
  srv.on('error', (err) => logger.error({ err: err.message }, 'http server error'));
  srv.on('clientError', (_err, socket) => socket.destroy());
  const info = srv.address() as AddressInfo;
  return {
    address: { host: info.address, port: info.port },
    close: () =>
      new Promise<void>((resolve) => {
        srv.close(() => resolve());
        // Keep-alive sockets (Prometheus, probes) would hold close() open.
        srv.closeAllConnections();
      }),
  };
}
