import { DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// Batch job recovery (FLIP-383) and the JobEventStore it replays.

export const RECOVERY_OPTIONS = {
  'execution.batch.job-recovery.enabled': {
    kind: 'boolean',
    default: 'false',
    description: 'Recover batch job progress after a JobMaster failover (FLIP-383).',
  },
  'execution.batch.job-recovery.keep-running-tasks': {
    kind: 'boolean',
    // On: a failover costs no running work. Subtasks of user coordinators without subtaskAdopted
    // are still rerun; a TaskManager cut off from a leader that stays leader is the open case (its
    // late attempts are never committed; docs/architecture/recovery.md, "What is not covered yet").
    default: 'true',
    description:
      'With batch job recovery on: TaskManagers keep running tasks through a JobMaster failover and the new leader adopts them.',
  },
  'execution.batch.job-recovery.max-held-coordinator-responses': {
    kind: 'int',
    default: '10000',
    description:
      'Responses of one user coordinator kept per attempt: by the TaskManager for an adopting leader, and by the JobMaster in the finished event; an attempt with more is rerun instead.',
  },
  'execution.batch.job-recovery.previous-worker.recovery.timeout': {
    kind: 'duration',
    default: '30 s',
    description: 'How long a new leader waits for TaskManagers to report retained partitions.',
  },
  'execution.batch.job-recovery.snapshot.min-pause': {
    kind: 'duration',
    default: '3 min',
    description: 'Minimum pause between coordinator snapshots written with finished events.',
  },
  'job-event.store.write-buffer.size': {
    kind: 'memory',
    default: '1 mb',
    description: 'Bytes buffered by the JobEventStore before a flush.',
  },
  'job-event.store.write-buffer.flush-interval': {
    kind: 'duration',
    default: '1 s',
    description: 'Longest time an event waits in the JobEventStore buffer.',
  },
  'job-event.store.durability': {
    kind: 'enum',
    default: 'fsync',
    values: ['fsync', 'flush'],
    description: 'fsync: every flush is fsynced; flush: written to the OS only.',
  },
} as const satisfies Record<string, OptionSpec>;

export const RECOVERY_RANGES: RangesOf<typeof RECOVERY_OPTIONS> = {
  'execution.batch.job-recovery.max-held-coordinator-responses': { min: 0, max: 10_000_000 },
  'execution.batch.job-recovery.previous-worker.recovery.timeout': { min: 0, max: DAYS_24 },
  'execution.batch.job-recovery.snapshot.min-pause': { min: 0, max: DAYS_24 },
  'job-event.store.write-buffer.size': { min: 1, max: 1024 ** 3 },
  'job-event.store.write-buffer.flush-interval': { min: 1, max: DAYS_24 },
};
