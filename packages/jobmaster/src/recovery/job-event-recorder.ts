import { errorMessage } from '@rebound/core';
import type { Clock, Logger, OperatorCoordinatorSnapshot } from '@rebound/core';
import type { JobEvent, JobEventManager } from '@rebound/event-store';
import type { CrashPoints } from '../crash-points.js';
import type { ExecutionGraphListener, ExecutionJobVertex, ExecutionVertex } from '../execution-graph.js';
import type { OperatorCoordinators } from '../operator-coordinators.js';
import type { ShuffleMaster } from '../shuffle/shuffle-master.js';
import type { CoordinatorHolderApi } from '../user-code/job-user-code.js';

/** What the recorder writes to and takes its snapshots from. */
export interface JobEventRecorderOptions {
  readonly jobId: string;
  /** The leader's epoch: attempts it deployed asked only it. */
  readonly epoch: number;
  readonly events: JobEventManager;
  readonly coordinators: OperatorCoordinators;
  /** Absent: no shuffle snapshots (a stateless shuffle has none). */
  readonly shuffleMaster?: ShuffleMaster;
  /** execution.batch.job-recovery.snapshot.min-pause */
  readonly snapshotMinPauseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly crashPoints?: CrashPoints;
}

/**
 * Writes every recovery-relevant change of the ExecutionGraph to the JobEventStore
 * (FLIP-383's JobEvents). Writing never blocks: the store buffers.
 *
 * Snapshots: a finished source subtask always records the splits it consumed (an increment);
 * a full coordinator snapshot goes with the event when the vertex finished or when
 * `execution.batch.job-recovery.snapshot.min-pause` has passed since the last one. User
 * coordinators' snapshots are timed per operator. A user coordinator with `subtaskAdopted` also
 * gets an increment: every answer the attempt got, so that a new leader restored from an older
 * snapshot keeps the subtask instead of rerunning it. Without one (no hook, or too many answers)
 * the subtasks that finished after the newest snapshot rerun, as Flink drops finished events that
 * no snapshot follows. The ShuffleMaster's snapshot follows the same rule as the full coordinator
 * snapshots, with its own clock; the ShuffleMaster decides whether it is full or incremental.
 */
export class JobEventRecorder implements ExecutionGraphListener {
  private lastSnapshotAtMs = -Infinity;
  private lastShuffleSnapshotAtMs = -Infinity;
  private readonly lastUserSnapshotAtMs = new Map<string, number>();
  private readonly events: JobEventManager;
  private readonly coordinators: OperatorCoordinators;
  private readonly snapshotMinPauseMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly crashPoints?: CrashPoints;

  constructor(private readonly opts: JobEventRecorderOptions) {
    this.events = opts.events;
    this.coordinators = opts.coordinators;
    this.snapshotMinPauseMs = opts.snapshotMinPauseMs;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.crashPoints = opts.crashPoints;
  }

  /** False once the store stopped for good (write failure or fenced); the job keeps running. */
  enabled = true;

  private write(type: JobEvent['type'], fn: () => void): void {
    if (!this.enabled || !this.events.isRunning()) return;
    try {
      this.crashPoints?.beforeEvent(type);
      fn();
      this.crashPoints?.afterEvent(type, () => this.events.flush());
    } catch (err) {
      this.enabled = false;
      this.logger.error(
        { err: errorMessage(err) },
        'recording job events failed; this job can no longer be recovered after a JobMaster failure',
      );
    }
  }

  onVertexInitialized(ejv: ExecutionJobVertex): void {
    this.write('ExecutionJobVertexInitialized', () =>
      this.events.writeEvent({
        type: 'ExecutionJobVertexInitialized',
        event: {
          vertex_id: ejv.id,
          parallelism: ejv.parallelism,
          inputs: ejv.jobVertex.inputs.map((edge, i) => ({
            producer_vertex_id: edge.source_vertex_id,
            subtask_ranges: ejv.inputRanges[i] ?? [],
          })),
        },
      }),
    );
  }

  onExecutionFinished(ev: ExecutionVertex): void {
    const ejv = ev.jobVertex;
    const vertexFinished = ejv.isFinished();
    const increments: OperatorCoordinatorSnapshot[] = [];
    const snapshots: OperatorCoordinatorSnapshot[] = [];
    const coordinator = this.coordinators.source(ejv.id);
    if (coordinator) {
      increments.push({ operator_id: coordinator.operatorId, state: coordinator.increment(ev.subtask) });
      const now = this.clock.now();
      if (
        coordinator.supportsBatchSnapshot() &&
        (vertexFinished || now - this.lastSnapshotAtMs >= this.snapshotMinPauseMs)
      ) {
        const state = coordinator.snapshotNow();
        if (state) {
          snapshots.push({ operator_id: coordinator.operatorId, state });
          this.lastSnapshotAtMs = now;
        }
      }
    }
    for (const h of this.coordinators.userOf(ejv.id)) {
      if (!h.supportsBatchSnapshot()) continue;
      const snapshot = this.userSnapshot(h, vertexFinished);
      // A snapshot taken now holds what the attempt got; an older one needs its answers.
      const answers = snapshot ? undefined : h.increment(ev.subtask, ev.attempt, ev.attemptEpoch === this.opts.epoch);
      if (snapshot) snapshots.push({ operator_id: h.operatorId, state: snapshot });
      if (answers) increments.push({ operator_id: h.operatorId, state: answers });
    }
    const shuffle = this.shuffleSnapshot(vertexFinished);
    this.write('ExecutionVertexFinished', () =>
      this.events.writeEvent(
        {
          type: 'ExecutionVertexFinished',
          event: {
            vertex_id: ejv.id,
            subtask: ev.subtask,
            attempt: ev.attempt,
            attempt_epoch: ev.attemptEpoch,
            location: ev.location ?? null,
            io_metrics: ev.ioMetrics ?? null,
            partitions: ejv.consumers.length > 0 ? [ev.partitionId()] : [],
            coordinator_snapshots: snapshots,
            coordinator_increments: increments,
            ...shuffle,
            finished_at_ms: ev.finishedAtMs,
            sink_temp_file: ev.sinkTempFile,
          },
        },
        // A finished vertex closes the file: its events become a durable unit.
        vertexFinished,
      ),
    );
  }

  /** A user coordinator's full snapshot, when one is due (its own min-pause clock). */
  private userSnapshot(h: CoordinatorHolderApi, vertexFinished: boolean): Uint8Array | undefined {
    const now = this.clock.now();
    if (!vertexFinished && now - (this.lastUserSnapshotAtMs.get(h.operatorId) ?? -Infinity) < this.snapshotMinPauseMs)
      return undefined;
    try {
      const state = h.snapshotNow();
      this.lastUserSnapshotAtMs.set(h.operatorId, now);
      return state;
    } catch (err) {
      // Without this snapshot the subtasks finished since the last one rerun after a failover,
      // unless their answers are recorded.
      this.logger.warn({ operatorId: h.operatorId, err: errorMessage(err) }, 'coordinator snapshot failed');
      return undefined;
    }
  }

  /** The ShuffleMaster's snapshot fields of a finished event; none when none is due or it is empty. */
  private shuffleSnapshot(vertexFinished: boolean): {
    has_shuffle_master_snapshot: boolean;
    shuffle_master_snapshot?: Uint8Array;
    shuffle_master_snapshot_incremental?: boolean;
  } {
    const shuffleMaster = this.opts.shuffleMaster;
    const now = this.clock.now();
    if (!shuffleMaster?.supportsBatchSnapshot()) return { has_shuffle_master_snapshot: false };
    if (!vertexFinished && now - this.lastShuffleSnapshotAtMs < this.snapshotMinPauseMs)
      return { has_shuffle_master_snapshot: false };
    try {
      const snapshot = shuffleMaster.snapshotState({ jobId: this.opts.jobId, vertexFinished });
      this.lastShuffleSnapshotAtMs = now;
      if (!snapshot || snapshot.isEmpty()) return { has_shuffle_master_snapshot: false };
      return {
        has_shuffle_master_snapshot: true,
        shuffle_master_snapshot: snapshot.state,
        shuffle_master_snapshot_incremental: snapshot.isIncremental(),
      };
    } catch (err) {
      // The next snapshot is taken with the next finished event; until then a new leader knows
      // less of where partitions are kept, and asks the holders.
      this.logger.warn({ err: errorMessage(err) }, 'shuffle master snapshot failed');
      return { has_shuffle_master_snapshot: false };
    }
  }

  onExecutionsReset(evs: readonly ExecutionVertex[]): void {
    this.write('ExecutionVertexReset', () =>
      this.events.writeEvent({
        type: 'ExecutionVertexReset',
        event: { vertices: evs.map((ev) => ({ vertex_id: ev.jobVertex.id, subtask: ev.subtask })) },
      }),
    );
  }
}
