import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { startMetricsHttpServer, type Configuration, type Logger, type MetricsServer } from '@rebound/core';
import type { PartitionStore } from '@rebound/partition';

export interface TaskManagerMetricsSource {
  readonly id: string;
  slotUsage(): { total: number; busy: number };
  readonly store: PartitionStore;
  registrationRetries(): number;
  registeredEpoch(): number | undefined;
}

export type { MetricsServer };

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

/** `GET /metrics` on `metrics.port`, at the TaskManager's bind host. */
export function startMetricsServer(registry: Registry, config: Configuration, logger: Logger): Promise<MetricsServer> {
  return startMetricsHttpServer(
    registry,
    { host: config.getString('taskmanager.bind-host'), port: config.getInt('metrics.port') },
    config,
    logger,
  );
}
