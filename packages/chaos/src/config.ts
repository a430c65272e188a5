/** Cluster settings of every run: recovery on, failure detection in seconds. */
export const CHAOS_CONFIG: Readonly<Record<string, string>> = {
  'heartbeat.interval': '200 ms',
  'heartbeat.timeout': '3 s',
  'high-availability.lease.timeout': '2 s',
  'high-availability.lease.renew-interval': '200 ms',
  'high-availability.lease.poll-interval': '100 ms',
  'rpc.timeout': '3 s',
  'restart-strategy.fixed-delay.delay': '100 ms',
  'execution.batch.job-recovery.enabled': 'true',
  'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
  'job-event.store.write-buffer.flush-interval': '50 ms',
  'taskmanager.registration.timeout': '60 s',
  'debug.allow-test-options': 'true',
};

/** taskmanager.registration.timeout of runs with `jobmasters-pause` (the pause must outlast it). */
export const PAUSE_REGISTRATION_TIMEOUT_MS = 4_000;
export const HEARTBEAT_TIMEOUT_MS = 3_000;

export const TASK_MANAGERS = 3;
export const SLOTS = 2;

/** How long `local up` and a daemon (re)start of a run may take. */
export const START_TIMEOUT_MS = 120_000;
