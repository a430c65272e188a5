import { PORT, DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// The shuffle: where result partitions are kept, and the shuffle workers of the remote service.

export const SHUFFLE_OPTIONS = {
  'shuffle.type': {
    kind: 'enum',
    default: 'taskmanager',
    values: ['taskmanager', 'remote'],
    description:
      'Where finished result partitions are kept: on the TaskManager that produced them, or on shuffle workers (remote), where they outlive the TaskManager.',
  },
  'shuffle.remote.replicas': {
    kind: 'int',
    default: '1',
    description:
      'Shuffle workers each partition is written to (remote shuffle); at 2 a read falls back to the replica when a worker is lost.',
  },
  'shuffle.remote.write-timeout': {
    kind: 'duration',
    default: '30 s',
    description:
      'Longest wait of a producer for a shuffle worker to take more of its partition, or to acknowledge the partition once committed (time the producer spends computing does not count); a worker that stalls longer fails the producer with UNAVAILABLE.',
  },
  'shuffle.remote.exclusion-timeout': {
    kind: 'duration',
    default: '30 s',
    description:
      'How long the leader places no partition on a shuffle worker a producer could not reach (unless no other worker is left); a worker that registers again is placed at once, one that is really gone is dropped after heartbeat.timeout.',
  },
  'shuffle-worker.bind-host': {
    kind: 'string',
    default: '127.0.0.1',
    description: 'Host a shuffle worker binds, and advertises unless shuffle-worker.host is set.',
  },
  'shuffle-worker.host': {
    kind: 'string',
    default: '',
    description: 'Host a shuffle worker advertises; empty: shuffle-worker.bind-host.',
  },
  'shuffle-worker.port': { kind: 'int', default: '0', description: 'Port of a shuffle worker (0: any free port).' },
  'shuffle-worker.metrics.port': {
    kind: 'int',
    default: '9250',
    description:
      "Port of the Prometheus /metrics endpoint of a shuffle worker (0: any free port); next to a TaskManager's metrics.port.",
  },
  'shuffle-worker.partition.expiry-timeout': {
    kind: 'duration',
    default: '30 min',
    description:
      "How long a shuffle worker keeps a job's partitions that no leader names as live (the job ended without a release, or no leader is elected).",
  },
  'shuffle-worker.partition.expiry-check-interval': {
    kind: 'duration',
    default: '30 s',
    description:
      'How often a shuffle worker looks for orphaned partitions (shuffle-worker.partition.expiry-timeout); a job expires at most this much late.',
  },
} as const satisfies Record<string, OptionSpec>;

export const SHUFFLE_RANGES: RangesOf<typeof SHUFFLE_OPTIONS> = {
  'shuffle.remote.replicas': { min: 1, max: 3 },
  'shuffle.remote.write-timeout': { min: 1, max: DAYS_24 },
  'shuffle.remote.exclusion-timeout': { min: 1, max: DAYS_24 },
  'shuffle-worker.port': PORT,
  'shuffle-worker.metrics.port': PORT,
  'shuffle-worker.partition.expiry-timeout': { min: 1, max: DAYS_24 },
  'shuffle-worker.partition.expiry-check-interval': { min: 1, max: DAYS_24 },
};
