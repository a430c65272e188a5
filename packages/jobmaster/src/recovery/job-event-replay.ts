import type {
  ExecutionJobVertexInitializedEvent__Output,
  ExecutionVertexFinishedEvent__Output,
  JobGraph__Output,
} from '@rebound/core';
import { JobEventsInconsistentError, type JobEventRecord } from '@rebound/event-store';
import { ShuffleMasterSnapshot } from '../shuffle/shuffle-master.js';

/** A kept finished event and the number of the event it was (events count from 1). */
interface FinishedEntry {
  readonly event: ExecutionVertexFinishedEvent__Output;
  readonly seq: number;
}

/**
 * What the events of earlier JobMaster attempts say about a job (Flink's
 * DefaultBatchJobRecoveryHandler replay state): decided vertices, the finished executions that
 * were not reset afterwards, the newest full coordinator snapshots, and the ShuffleMaster's
 * snapshots from its newest full one on.
 *
 * Finished executions are kept by vertex and subtask in arrays, not under a string key per
 * execution: a new leader replays one event per finished execution (10,000s), and three maps of
 * string keys were most of what applying them cost.
 */
export class ReplayedJobState {
  readonly initialized = new Map<string, ExecutionJobVertexInitializedEvent__Output>();
  /** Newest full snapshot per coordinator (operator id). */
  readonly snapshots = new Map<string, Uint8Array>();
  /** The newest full ShuffleMaster snapshot and the increments after it, oldest first. */
  readonly shuffleSnapshots: ShuffleMasterSnapshot[] = [];
  /** Finished executions `dropFinishedAfterSnapshot` forgot: they must be recorded as reset. */
  readonly dropped: ExecutionVertexFinishedEvent__Output[] = [];
  /** Kept finished events in finish order; one that a reset or a later finish replaced is a hole. */
  private readonly kept: (FinishedEntry | undefined)[] = [];
  private keptCount = 0;
  /** Per vertex, per subtask: where its kept finished event is in `kept`. */
  private readonly keptAt = new Map<string, (number | undefined)[]>();
  /** Per vertex, per subtask: the highest attempt number any event mentions. */
  private readonly maxAttempts = new Map<string, (number | undefined)[]>();
  /** Number of the event that carried each newest snapshot. */
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
        this.forget(e.vertex_id, e.subtask);
        perSubtask(this.keptAt, e.vertex_id)[e.subtask] = this.kept.length;
        this.kept.push({ event: e, seq: this.events });
        this.keptCount++;
        const attempts = perSubtask(this.maxAttempts, e.vertex_id);
        attempts[e.subtask] = Math.max(attempts[e.subtask] ?? -1, e.attempt);
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
        for (const v of record.event.vertices) this.forget(v.vertex_id, v.subtask);
        return;
    }
  }

  /** The subtask's finished event is no longer kept (if it was). */
  private forget(vertexId: string, subtask: number): void {
    const at = this.keptAt.get(vertexId);
    const i = at?.[subtask];
    if (i === undefined) return;
    this.kept[i] = undefined;
    at![subtask] = undefined;
    this.keptCount--;
  }

  /** The kept finished events, in finish order. */
  finished(): ExecutionVertexFinishedEvent__Output[] {
    const out: ExecutionVertexFinishedEvent__Output[] = [];
    for (const k of this.kept) if (k) out.push(k.event);
    return out;
  }

  /** How many finished executions are kept. */
  get finishedCount(): number {
    return this.keptCount;
  }

  /** The highest attempt number any event mentions of the subtask; -1 for none. */
  maxAttempt(vertexId: string, subtask: number): number {
    return this.maxAttempts.get(vertexId)?.[subtask] ?? -1;
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
    for (const k of this.kept) {
      if (!k || !this.isAfterSnapshot(k, vertexId, operatorId) || keep(k.event)) continue;
      this.forget(k.event.vertex_id, k.event.subtask);
      this.dropped.push(k.event);
      dropped++;
    }
    return dropped;
  }

  /** The vertex's kept executions that finished after the newest snapshot of `operatorId`, in finish order. */
  finishedAfterSnapshot(vertexId: string, operatorId: string): ExecutionVertexFinishedEvent__Output[] {
    const out: ExecutionVertexFinishedEvent__Output[] = [];
    for (const k of this.kept) if (k && this.isAfterSnapshot(k, vertexId, operatorId)) out.push(k.event);
    return out;
  }

  private isAfterSnapshot(k: FinishedEntry, vertexId: string, operatorId: string | undefined): boolean {
    const covered = operatorId === undefined ? -1 : (this.snapshotSeq.get(operatorId) ?? -1);
    return k.event.vertex_id === vertexId && k.seq > covered;
  }

  finishedOf(vertexId: string): ExecutionVertexFinishedEvent__Output[] {
    const out: ExecutionVertexFinishedEvent__Output[] = [];
    for (const k of this.kept) if (k && k.event.vertex_id === vertexId) out.push(k.event);
    return out;
  }
}

/** The vertex's array by subtask in `table`, made on first use. */
function perSubtask<T>(table: Map<string, (T | undefined)[]>, vertexId: string): (T | undefined)[] {
  let a = table.get(vertexId);
  if (!a) table.set(vertexId, (a = []));
  return a;
}
