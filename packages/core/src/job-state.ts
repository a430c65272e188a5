/**
 * Flink's job states (JobStatus), as the JobMaster keeps them, the HA directory stores them and
 * `JobStatus.state` carries them over RPC. RECONCILING is FLIP-383's: the new leader replays the
 * job's events and waits for TaskManagers to report their partitions.
 */
export type JobState =
  'CREATED' | 'RUNNING' | 'RECONCILING' | 'FAILING' | 'CANCELLING' | 'FINISHED' | 'FAILED' | 'CANCELED';

/** Globally terminal job states: nothing changes any more, and no leader runs the job again. */
export type TerminalJobState = Extract<JobState, 'FINISHED' | 'FAILED' | 'CANCELED'>;

export const TERMINAL_JOB_STATES: ReadonlySet<JobState> = new Set<TerminalJobState>(['FINISHED', 'FAILED', 'CANCELED']);

/** For states that arrive as plain strings (RPC, JSON files). */
export function isTerminalJobState(state: string): state is TerminalJobState {
  return (TERMINAL_JOB_STATES as ReadonlySet<string>).has(state);
}
