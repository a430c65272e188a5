import { DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// How jobs run: adaptive parallelism, restarts, failure history, job module loading.

export const JOB_OPTIONS = {
  'execution.batch.adaptive.auto-parallelism.min-parallelism': {
    kind: 'int',
    default: '1',
    description: 'Lower bound of a decided parallelism.',
  },
  'execution.batch.adaptive.auto-parallelism.max-parallelism': {
    kind: 'int',
    default: '128',
    description:
      'Upper bound of a decided parallelism, and the number of subpartitions written for adaptive consumers.',
  },
  'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': {
    kind: 'memory',
    default: '16 mb',
    description: 'Bytes one task of an adaptive vertex should consume.',
  },
  'execution.batch.adaptive.auto-parallelism.default-source-parallelism': {
    kind: 'int',
    default: '0',
    description:
      'Parallelism of sources that do not set one (0: one subtask per split, at most max-parallelism; one per slot registered when the job starts where there are 4 or more splits per slot).',
  },
  'parallelism.default': {
    kind: 'int',
    default: '0',
    description: 'Parallelism of non-source vertices that do not set one (0: decided adaptively).',
  },
  'restart-strategy.fixed-delay.attempts': {
    kind: 'int',
    default: '20',
    description: 'Failovers a job may take before it fails.',
  },
  'web.exception-history-size': {
    kind: 'int',
    default: '16',
    description: "Task failures a job keeps for /jobs/:id/exceptions, newest first (Flink's key and default).",
  },
  'restart-strategy.fixed-delay.delay': {
    kind: 'duration',
    default: '1 s',
    description: 'Delay before a failed task is redeployed.',
  },
  'jobmaster.job-module.load-timeout': {
    kind: 'duration',
    default: '30 s',
    description:
      "Longest time a job module may take to load and build in its job's user-code worker on the JobMaster; one that takes longer fails its job.",
  },
  'jobmaster.user-code.call-timeout': {
    kind: 'duration',
    default: '5 s',
    description:
      "Longest a job's user code on the JobMaster (enumerators, coordinators) may take in a call the JobMaster waits for, or go without answering its worker's heartbeat; then its worker is ended and the job fails.",
  },
  'jobmaster.user-code.heap-size': {
    kind: 'memory',
    default: '512 mb',
    description: "Heap of each job's user-code worker on the JobMaster; user code that needs more fails its job.",
  },
  'jobmaster.job-load.max-crashes': {
    kind: 'int',
    default: '2',
    description:
      'JobMasters that may die in a row while loading one job module before the job is failed instead of loaded again.',
  },
  // collect(): the result is held in storageDir and streamed through the leader, so it is bounded.
  'collect-sink.max-bytes': {
    kind: 'memory',
    default: '64 mb',
    description: 'Largest collect() result a job may commit; above it the job fails, naming this key.',
  },
  'collect-sink.max-rows': {
    kind: 'int',
    default: '1000000',
    description: 'Most rows a collect() result may hold; above it the job fails, naming this key.',
  },
  'collect-sink.fetch.timeout': {
    kind: 'duration',
    default: '5 min',
    description: 'Deadline of one FetchJobResult stream; a client resumes from its position after it.',
  },
} as const satisfies Record<string, OptionSpec>;

export const JOB_RANGES: RangesOf<typeof JOB_OPTIONS> = {
  'execution.batch.adaptive.auto-parallelism.min-parallelism': { min: 1, max: 32_768 },
  'execution.batch.adaptive.auto-parallelism.max-parallelism': { min: 1, max: 32_768 },
  'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': { min: 1, max: 1024 ** 4 },
  'execution.batch.adaptive.auto-parallelism.default-source-parallelism': { min: 0, max: 32_768 },
  'parallelism.default': { min: 0, max: 32_768 },
  'restart-strategy.fixed-delay.attempts': { min: 0, max: 1_000_000 },
  'web.exception-history-size': { min: 0, max: 100_000 },
  'restart-strategy.fixed-delay.delay': { min: 0, max: DAYS_24 },
  'jobmaster.job-module.load-timeout': { min: 1, max: DAYS_24 },
  'jobmaster.job-load.max-crashes': { min: 1, max: 1000 },
  'jobmaster.user-code.call-timeout': { min: 1, max: DAYS_24 },
  'jobmaster.user-code.heap-size': { min: 16 * 1024 * 1024, max: 64 * 1024 * 1024 * 1024 },
  'collect-sink.max-bytes': { min: 1, max: 1024 ** 3 },
  'collect-sink.max-rows': { min: 1, max: 1_000_000_000 },
  'collect-sink.fetch.timeout': { min: 1, max: DAYS_24 },
};
