import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Configuration } from './config.js';
import { AddressInUseError, errorMessage } from './errors.js';
import { httpCredentialOf, pathOf } from './http-credentials.js';
import type { Logger } from './logger.js';
import { ClusterSecurity } from './security.js';

/** What a Prometheus registry offers (prom-client's Registry fits; core does not depend on it). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` of a TaskManager or a shuffle worker on `host:port` (a plain HTTP server: one
 * path, nothing else to route), behind the cluster secret.
 */
export async function startMetricsHttpServer(
  source: MetricsSource,
  where: { readonly host: string; readonly port: number },
  config: Configuration,
  logger: Logger,
): Promise<MetricsServer> {
  // Loaded here: the CLI's short commands load core and never serve HTTP.
  const { createServer } = await import('node:http');
  const { host, port } = where;
  const security = ClusterSecurity.of(config);
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = pathOf(req.url);
    const given = httpCredentialOf(req.headers, req.url);
    if (!security.accepts(given?.secret)) {
      const why = `${given ? 'wrong' : 'no'} cluster secret: send 'Authorization: Bearer <secret>' (security.auth.token-file)`;
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify({ errors: [why] }));
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [`Not found: ${req.method} ${path}`] }));
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (err: unknown) => fail(req, res, err),
    );
  };
  // Nothing a request carries may reach the process's uncaught-exception handler: a process that
  // exits loses the partitions it holds.
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    logger.error({ err: errorMessage(err), method: req.method, path: pathOf(req.url) }, 'metrics request failed');
    if (res.headersSent) res.destroy();
    else res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: ['internal error'] }));
  };
  const server: Server = createServer((req, res) => {
    try {
      serve(req, res);
    } catch (err) {
      fail(req, res, err);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new AddressInUseError(
              `metrics.port ${port} on ${host} is already in use; choose another metrics.port (0: any free port)`,
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${typeof addr === 'object' && addr ? addr.port : port}`;
  logger.info({ url }, 'metrics serving');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
