import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { PartitionStore } from '@rebound/partition';

export interface ShuffleWorkerMetricsSource {
  readonly id: string;
  readonly store: PartitionStore;
  usage(): { partitions: number; bytes: number };
  registrationRetries(): number;
  registeredEpoch(): number | undefined;
  expiredJobs(): number;
}

/** The shuffle worker's Prometheus series (`rebound_shuffle_worker_*`), computed at scrape time. */
export function createShuffleWorkerRegistry(src: ShuffleWorkerMetricsSource): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ shuffle_worker_id: src.id });
  collectDefaultMetrics({ register: registry, prefix: 'rebound_process_' });
  new Gauge({
    name: 'rebound_shuffle_worker_partitions',
    help: 'Finished result partitions this shuffle worker holds on disk.',
    registers: [registry],
    collect() {
      this.set(src.usage().partitions);
    },
  });
  new Gauge({
    name: 'rebound_shuffle_worker_partition_bytes',
    help: 'Bytes of the finished result partitions this shuffle worker holds.',
    registers: [registry],
    collect() {
      this.set(src.usage().bytes);
    },
  });
  new Counter({
    name: 'rebound_shuffle_worker_partition_bytes_served_total',
    help: 'Partition bytes this shuffle worker streamed to consumers.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.store.metrics.bytesRead);
    },
  });
  new Counter({
    name: 'rebound_shuffle_worker_expired_jobs_total',
    help: 'Jobs whose partitions were deleted because no leader named them (shuffle-worker.partition.expiry-timeout).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.expiredJobs());
    },
  });
  new Counter({
    name: 'rebound_shuffle_worker_registration_retries_total',
    help: 'Failed attempts to register with the leading JobMaster (each is retried).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.registrationRetries());
    },
  });
  new Gauge({
    name: 'rebound_shuffle_worker_registered_epoch',
    help: 'Epoch of the JobMaster this shuffle worker is registered with (0: not registered).',
    registers: [registry],
    collect() {
      this.set(src.registeredEpoch() ?? 0);
    },
  });
  return registry;
}
