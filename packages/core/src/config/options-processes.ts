import { PORT, DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// JobMaster and TaskManager processes: slots, heartbeats, RPC deadlines, addresses, the data path.

export const PROCESS_OPTIONS = {
  'taskmanager.registration.timeout': {
    kind: 'duration',
    default: '5 min',
    description:
      'How long a TaskManager that lost its JobMaster keeps retained partitions while it retries registering.',
  },
  'taskmanager.numberOfTaskSlots': { kind: 'int', default: '2', description: 'Slots per TaskManager.' },
  'heartbeat.interval': {
    kind: 'duration',
    default: '10 s',
    description: 'Interval of TaskManager heartbeats to the JobMaster.',
  },
  'heartbeat.timeout': {
    kind: 'duration',
    default: '50 s',
    description: 'A peer not heard from for this long is considered lost.',
  },
  'cluster.startup.timeout': {
    kind: 'duration',
    default: '1 min',
    description: 'Longest start-up of a JobMaster or TaskManager process; one that takes longer exits with an error.',
  },
  'rpc.timeout': { kind: 'duration', default: '10 s', description: 'Deadline of cluster-internal RPCs.' },
  'rpc.partition-request.timeout': {
    kind: 'duration',
    default: '30 s',
    description: 'Longest wait for the first chunk of a requested subpartition.',
  },
  'jobmaster.bind-host': {
    kind: 'string',
    default: '127.0.0.1',
    description: 'Host the JobMaster binds, and advertises unless jobmaster.rpc.address is set.',
  },
  'jobmaster.port': { kind: 'int', default: '0', description: 'Port of the JobMaster (0: any free port).' },
  'jobmaster.rpc.address': {
    kind: 'string',
    default: '',
    description:
      "Host the JobMaster advertises to TaskManagers and clients (Flink's jobmanager.rpc.address); empty: jobmaster.bind-host. Set it when binding a wildcard address.",
  },
  'taskmanager.bind-host': {
    kind: 'string',
    default: '127.0.0.1',
    description: 'Host the TaskManager binds, and advertises unless taskmanager.host is set.',
  },
  'taskmanager.port': { kind: 'int', default: '0', description: 'Port of the TaskManager (0: any free port).' },
  'taskmanager.host': {
    kind: 'string',
    default: '',
    description:
      "Host the TaskManager advertises to the JobMaster and to other TaskManagers (Flink's taskmanager.host); empty: taskmanager.bind-host. Set it when binding a wildcard address.",
  },
  'taskmanager.network.block-size': {
    kind: 'memory',
    default: '32 kb',
    description: 'Size of the blocks a partition is written and streamed in.',
  },
  'taskmanager.network.combiner.max-keys': {
    kind: 'int',
    default: '500000',
    description:
      'Keys a producer-side combiner holds before it spills to the partition (500,000 keys of a wordcount take about 60 MB).',
  },
} as const satisfies Record<string, OptionSpec>;

export const PROCESS_RANGES: RangesOf<typeof PROCESS_OPTIONS> = {
  'taskmanager.registration.timeout': { min: 1, max: DAYS_24 },
  'taskmanager.numberOfTaskSlots': { min: 1, max: 1024 },
  'heartbeat.interval': { min: 1, max: DAYS_24 },
  'heartbeat.timeout': { min: 1, max: DAYS_24 },
  'cluster.startup.timeout': { min: 1, max: DAYS_24 },
  'rpc.timeout': { min: 1, max: DAYS_24 },
  'rpc.partition-request.timeout': { min: 1, max: DAYS_24 },
  'jobmaster.port': PORT,
  'taskmanager.port': PORT,
  'taskmanager.network.block-size': { min: 64, max: 64 * 1024 ** 2 },
  'taskmanager.network.combiner.max-keys': { min: 0, max: 100_000_000 },
};
