import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import {
  ClusterSecurity,
  errorMessage,
  httpCredentialOf,
  pathOf,
  type Configuration,
  type Logger,
  AddressInUseError,
} from '@rebound/core';
import type { PartitionStore } from '@rebound/partition';

export interface TaskManagerMetricsSource {
  readonly id: string;
  slotUsage(): { total: number; busy: number };
  readonly store: PartitionStore;
  registrationRetries(): number;
  registeredEpoch(): number | undefined;
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The TaskManager's Prometheus series (`rebound_taskmanager_*`), computed at scrape time. */
export function createTaskManagerRegistry(src: TaskManagerMetricsSource): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ taskmanager_id: src.id });
  collectDefaultMetrics({ register: registry, prefix: 'rebound_process_' });
  new Gauge({
    name: 'rebound_taskmanager_slots',
    help: 'Slots of this TaskManager: total, busy (running a task) and free.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const u = src.slotUsage();
      this.set({ state: 'total' }, u.total);
      this.set({ state: 'busy' }, u.busy);
      this.set({ state: 'free' }, u.total - u.busy);
    },
  });
  new Gauge({
    name: 'rebound_taskmanager_retained_partitions',
    help: 'Finished result partitions this TaskManager holds on disk (across JobMaster failovers too).',
    registers: [registry],
    collect() {
      this.set(src.store.listFinished().length);
    },
  });
  new Gauge({
    name: 'rebound_taskmanager_retained_partition_bytes',
    help: 'Bytes of the finished result partitions this TaskManager holds.',
    registers: [registry],
    collect() {
      this.set(src.store.listFinished().reduce((s, p) => s + Number(p.total_bytes), 0));
    },
  });
  new Counter({
    name: 'rebound_taskmanager_partition_bytes_served_total',
    help: 'Partition bytes this TaskManager streamed to consumers.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.store.metrics.bytesRead);
    },
  });
  new Counter({
    name: 'rebound_taskmanager_registration_retries_total',
    help: 'Failed attempts to register with the leading JobMaster (each is retried).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.registrationRetries());
    },
  });
  new Gauge({
    name: 'rebound_taskmanager_registered_epoch',
    help: 'Epoch of the JobMaster this TaskManager is registered with (0: not registered).',
    registers: [registry],
    collect() {
      this.set(src.registeredEpoch() ?? 0);
    },
  });
  return registry;
}

/** `GET /metrics` on `metrics.port` (a plain HTTP server: one path, nothing else to route). */
export async function startMetricsServer(
  registry: Registry,
  config: Configuration,
  logger: Logger,
): Promise<MetricsServer> {
  const host = config.getString('taskmanager.bind-host');
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
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => fail(req, res, err),
    );
  };
  // Nothing a request carries may reach the process's uncaught-exception handler: a TaskManager
  // that exits loses the partitions it holds.
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
  const port = config.getInt('metrics.port');
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
