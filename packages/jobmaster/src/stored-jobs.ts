import { JobNotFoundError } from '@rebound/core';
import type { JobStatus, JobSummary } from '@rebound/core';
import type { JobGraphStore } from '@rebound/ha';
import type { JobRecords } from './job-records.js';

/** What a running JobMaster says of a job it runs, for the job list. */
export interface LiveJobSummary {
  readonly state: string;
  readonly tasksTotal: number;
  readonly tasksFinished: number;
}

/**
 * Jobs as the JobGraphStore and their records tell them: the status and list of every job no
 * JobMaster here runs. The leader's Dispatcher asks it for the jobs it does not run; a standby's
 * REST API for all of them while no leader answers. `unfinished` is what a stored job that has
 * not ended is called, which only the caller knows: waiting for this leader to take it over
 * (CREATED), or for any leader at all (SUSPENDED).
 */
export class StoredJobs {
  constructor(
    private readonly store: Pick<JobGraphStore, 'getJob' | 'hasJob' | 'getTerminalStatus' | 'listJobs'>,
    private readonly records: JobRecords,
  ) {}

  async status(jobId: string, unfinished: Pick<JobStatus, 'state' | 'leader_epoch'>): Promise<JobStatus> {
    const { store, records } = this;
    const final = await records.finalStatus(jobId);
    if (final) return final;
    const terminal = await store.getTerminalStatus(jobId).catch(() => undefined);
    if (terminal) {
      // No final status: a leader ended the job for a predecessor (it completed the commit the
      // one before it started). The failovers the job went through are still its history.
      const { graph } = await store.getJob(jobId);
      return {
        job_id: jobId,
        name: graph.name,
        state: terminal.state,
        failure: terminal.failure ?? '',
        finished_at_ms: terminal.finishedAtMs,
        vertices: [],
        recoveries: (await records.recoveries(jobId)).reports,
      };
    }
    if (await store.hasJob(jobId)) {
      const { graph } = await store.getJob(jobId);
      return {
        job_id: jobId,
        name: graph.name,
        ...unfinished,
        submitted_at_ms: graph.submitted_at_ms,
        vertices: [],
      };
    }
    throw new JobNotFoundError(jobId);
  }

  /** Every stored job; `live` answers for the jobs a JobMaster here runs. */
  async list(live: (jobId: string) => LiveJobSummary | undefined, unfinishedState: string): Promise<JobSummary[]> {
    const out: JobSummary[] = [];
    for (const s of await this.store.listJobs()) {
      if (s.damage) {
        out.push({ job_id: s.jobId, name: s.name, state: 'DAMAGED', error: s.damage });
        continue;
      }
      const running = live(s.jobId);
      let total = running?.tasksTotal ?? 0;
      let finished = running?.tasksFinished ?? 0;
      if (!running && s.status) {
        // A terminal job's tasks are in its final status (a job listed 0/0 looked like it never ran).
        for (const v of (await this.records.finalStatus(s.jobId))?.vertices ?? []) {
          total += v.parallelism;
          finished += v.tasks?.finished ?? 0;
        }
      }
      out.push({
        job_id: s.jobId,
        name: s.name,
        state: running?.state ?? s.status?.state ?? unfinishedState,
        submitted_at_ms: s.submittedAtMs,
        finished_at_ms: s.status?.finishedAtMs ?? 0,
        tasks_total: total,
        tasks_finished: finished,
      });
    }
    return out;
  }
}
