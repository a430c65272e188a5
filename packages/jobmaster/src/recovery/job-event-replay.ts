import { executionVertexKey } from '@rebound/core';
import type {
  ExecutionJobVertexInitializedEvent__Output,
  ExecutionVertexFinishedEvent__Output,
  JobGraph__Output,
} from '@rebound/core';
import { JobEventsInconsistentError, type JobEventRecord } from '@rebound/event-store';
import { ShuffleMasterSnapshot } from '../shuffle/shuffle-master.js';

/**
 * What the events of earlier JobMaster attempts say about a job (Flink's
 * DefaultBatchJobRecoveryHandler replay state): decided vertices, the finished executions that
 * were not reset afterwards, the newest full coordinator snapshots, and the ShuffleMaster's
 * snapshots from its newest full one on.
 */
export class ReplayedJobState {
  readonly initialized = new Map<string, ExecutionJobVertexInitializedEvent__Output>();
  /** Insertion order = finish order; a reset removes the entry. */
  readonly finished = new Map<string, ExecutionVertexFinishedEvent__Output>();
  /** Highest attempt number any event mentions, per execution vertex. */
  readonly maxAttempt = new Map<string, number>();
  /** Newest full snapshot per coordinator (operator id). */
  readonly snapshots = new Map<string, Uint8Array>();
  /** The newest full ShuffleMaster snapshot and the increments after it, oldest first. */
  readonly shuffleSnapshots: ShuffleMasterSnapshot[] = [];
  /** Finished executions `dropFinishedAfterSnapshot` forgot: they must be recorded as reset. */
  readonly dropped: ExecutionVertexFinishedEvent__Output[] = [];
  /** Number of the event that finished each kept execution, and that carried each newest snapshot. */
  private readonly finishedSeq = new Map<string, number>();
  private readonly snapshotSeq = new Map<string, number>();
  events = 0;
  lastEventAtMs = 0;

  constructor(private readonly graph: JobGraph__Output) {}

  private vertex(id: string, what: string): void {
    if (!this.graph.vertices.some((v) => v.id === id)) {
      throw new JobEventsInconsistentError(`${what} names vertex '${id}', which the job graph does not have`);
    }
  }

  apply(record: JobEventRecord): void {
    this.events++;
    this.lastEventAtMs = Math.max(this.lastEventAtMs, record.writtenAtMs);
    switch (record.type) {
      case 'ExecutionJobVertexInitialized': {
        const e = record.event;
        this.vertex(e.vertex_id, 'an ExecutionJobVertexInitializedEvent');
        if (e.parallelism < 1)
          throw new JobEventsInconsistentError(`vertex ${e.vertex_id} initialized with parallelism ${e.parallelism}`);
        this.initialized.set(e.vertex_id, e);
        return;
      }
      case 'ExecutionVertexFinished': {
        const e = record.event;
        this.vertex(e.vertex_id, 'an ExecutionVertexFinishedEvent');
        const init = this.initialized.get(e.vertex_id);
        if (!init || e.subtask < 0 || e.subtask >= init.parallelism) {
          throw new JobEventsInconsistentError(
            `finished event for ${e.vertex_id}#${e.subtask} before its vertex was initialized`,
          );
        }
        const key = executionVertexKey(e.vertex_id, e.subtask);
        this.finished.delete(key);
        this.finished.set(key, e);
        this.finishedSeq.set(key, this.events);
        this.maxAttempt.set(key, Math.max(this.maxAttempt.get(key) ?? -1, e.attempt));
        for (const s of e.coordinator_snapshots) {
          this.snapshots.set(s.operator_id, s.state);
          this.snapshotSeq.set(s.operator_id, this.events);
        }
        if (e.has_shuffle_master_snapshot) {
          const incremental = e.shuffle_master_snapshot_incremental;
          if (!incremental) this.shuffleSnapshots.length = 0;
          this.shuffleSnapshots.push(new ShuffleMasterSnapshot(e.shuffle_master_snapshot, incremental));
        }
        return;
      }
      case 'ExecutionVertexReset':
        for (const v of record.event.vertices) this.finished.delete(executionVertexKey(v.vertex_id, v.subtask));
        return;
    }
  }

  /**
   * Forgets the vertex's executions that finished after the newest snapshot of coordinator
   * `operatorId` (all of them without one, or without an operator), unless `keep` says the
   * coordinator can be told what they did: otherwise it is not in the state the coordinator is
   * restored to, so they must run again. Returns how many it forgot.
   */
  dropFinishedAfterSnapshot(
    vertexId: string,
    operatorId?: string,
    keep: (e: ExecutionVertexFinishedEvent__Output) => boolean = () => false,
  ): number {
    let dropped = 0;
    for (const [key, e] of this.finished) {
      if (!this.isAfterSnapshot(key, e, vertexId, operatorId) || keep(e)) continue;
      this.finished.delete(key);
      this.dropped.push(e);
      dropped++;
    }
    return dropped;
  }

  /** The vertex's kept executions that finished after the newest snapshot of `operatorId`, in finish order. */
  finishedAfterSnapshot(vertexId: string, operatorId: string): ExecutionVertexFinishedEvent__Output[] {
    return [...this.finished]
      .filter(([key, e]) => this.isAfterSnapshot(key, e, vertexId, operatorId))
      .map(([, e]) => e);
  }

  private isAfterSnapshot(
    key: string,
    e: ExecutionVertexFinishedEvent__Output,
    vertexId: string,
    operatorId: string | undefined,
  ): boolean {
    const covered = operatorId === undefined ? -1 : (this.snapshotSeq.get(operatorId) ?? -1);
    return e.vertex_id === vertexId && this.finishedSeq.get(key)! > covered;
  }

  finishedOf(vertexId: string): ExecutionVertexFinishedEvent__Output[] {
    return [...this.finished.values()].filter((e) => e.vertex_id === vertexId);
  }
}
