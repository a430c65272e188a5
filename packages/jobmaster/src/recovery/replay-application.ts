import type { ExecutionVertexFinishedEvent__Output, RecoveryReport } from '@rebound/core';
import type { SourceSplit } from '@rebound/api';
import { JobEventsInconsistentError } from '@rebound/event-store';
import { OperatorCoordinatorHolder } from '../operator-coordinator-holder.js';
import type { BatchJobRecoveryContext } from './batch-job-recovery-context.js';
import type { JobEventRecorder } from './job-event-recorder.js';
import type { ReplayedJobState } from './job-event-replay.js';

/** What applying a replay works with. */
export interface ReplayApplication {
  readonly ctx: Pick<BatchJobRecoveryContext, 'job' | 'coordinators' | 'logger' | 'shuffleMaster'>;
  /** execution.batch.job-recovery.keep-running-tasks of the job. */
  readonly keepRunning: boolean;
  /** Records the resets the replay decides (it listens to the graph once `startRecording` ran). */
  readonly recorder: Pick<JobEventRecorder, 'onExecutionsReset'>;
  /** The recorder listens to the graph from now on: what the replay put there is in the log already. */
  startRecording(): void;
}

/**
 * Puts what the event log says into the graph and the coordinators (FLIP-383's finalizeReplay):
 * decided vertices, finished executions with their original attempts, restored coordinators and
 * ShuffleMaster; resets what no snapshot covers. Partitions are reconciled afterwards.
 */
export async function applyReplay(
  app: ReplayApplication,
  replayed: ReplayedJobState,
  report: RecoveryReport,
): Promise<void> {
  const { ctx, keepRunning, recorder } = app;
  const graph = ctx.job.graph;
  const coordinators = ctx.coordinators;
  // What the log says goes into the graph before the recorder listens: it is in the log already.
  for (const ejv of graph.vertices) {
    const init = replayed.initialized.get(ejv.id);
    if (!init) continue;
    const ranges = init.inputs.map((i) => i.subtask_ranges.map((r) => ({ start: r.start, end: r.end })));
    if (ejv.isSource) coordinators.createSource(ejv, init.parallelism);
    graph.initializeVertex(ejv, init.parallelism, ranges, ejv.jobVertex.parallelism === 0);
    await coordinators.createUserCoordinators(ejv, false);
  }
  const dropped = dropFinishedNotCoveredByCoordinators(ctx, replayed);
  for (const e of replayed.finished()) {
    const ev = graph.executionVertex(e.vertex_id, e.subtask);
    if (!ev) throw new JobEventsInconsistentError(`finished event for unknown subtask ${e.vertex_id}#${e.subtask}`);
    ev.attempt = e.attempt;
    ev.attemptEpoch = e.attempt_epoch;
    if (e.sink_temp_file) ev.sinkTempFile = e.sink_temp_file;
    graph.markFinished(
      ev,
      e.location ?? { task_manager_id: '', address: '' },
      e.io_metrics ?? { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
      e.finished_at_ms,
    );
  }
  // Unfinished subtasks get attempt numbers no earlier attempt used.
  for (const ev of graph.allExecutionVertices()) {
    if (ev.state !== 'FINISHED') ev.attempt = replayed.maxAttempt(ev.jobVertex.id, ev.subtask) + 1;
  }
  report.executions_recovered = replayed.finishedCount;
  app.startRecording();
  // The log still says they finished. Unless it also says they were reset, a later leader keeps
  // them once a newer snapshot follows their finished events in the log, and their output (ids
  // the coordinator has since handed out again) comes back next to their reruns.
  const droppedExecutions = replayed.dropped.map((e) => graph.executionVertex(e.vertex_id, e.subtask)!);
  if (droppedExecutions.length > 0) recorder.onExecutionsReset(droppedExecutions);

  let reset = 0;
  for (const [vertexId, coordinator] of coordinators.sourceEntries()) {
    const ejv = graph.vertex(vertexId);
    const finishedEvents = replayed.finishedOf(vertexId);
    const attempts = new Map(ejv.vertices.map((ev) => [ev.subtask, ev.attempt]));
    if (coordinator.supportsBatchSnapshot()) {
      const owned = new Map<number, SourceSplit[]>();
      for (const e of finishedEvents) {
        const inc = e.coordinator_increments.find((c) => c.operator_id === coordinator.operatorId);
        owned.set(e.subtask, inc ? (JSON.parse(Buffer.from(inc.state).toString('utf8')) as SourceSplit[]) : []);
      }
      await coordinator.restore(replayed.snapshots.get(coordinator.operatorId), owned, attempts);
    } else if (ejv.isFinished()) {
      // Its enumerator state is gone, but nothing of it has to run again, unless a subtask
      // must rerun later: then all of them do.
      coordinators.restartAllOnResetOf(vertexId);
      await coordinator.start();
    } else {
      const finished = ejv.vertices.filter((ev) => ev.state === 'FINISHED');
      ctx.logger.info(
        { vertexId, finished: finished.length },
        'source without batch snapshots was not finished: all its subtasks rerun',
      );
      graph.resetForNewExecutions(finished);
      reset += finished.length;
      await coordinator.start();
      for (const ev of ejv.vertices) coordinator.setAttempt(ev.subtask, ev.attempt);
    }
  }
  for (const [vertexId, holders] of coordinators.userEntries()) {
    const ejv = graph.vertex(vertexId);
    for (const h of holders) {
      if (h.supportsBatchSnapshot()) {
        await h.resetToCheckpoint(replayed.snapshots.get(h.operatorId));
        // What the subtasks kept after that snapshot got goes into the restored state.
        for (const e of replayed.finishedAfterSnapshot(vertexId, h.operatorId))
          h.subtaskAdopted(e.subtask, e.attempt, recordedAnswers(e, h.operatorId)!);
      } else {
        if (ejv.isFinished()) coordinators.restartAllOnResetOf(vertexId);
        await h.start();
      }
      // Attempts that were running at the snapshot (or that finished after it) run again; with
      // keep-running-tasks only those nobody kept, once reconciliation knows which.
      if (!keepRunning)
        for (const ev of ejv.vertices) if (ev.state !== 'FINISHED') h.subtaskReset(ev.subtask, ev.attempt);
    }
  }
  report.executions_reset = reset + dropped;
  ctx.shuffleMaster.restoreState(ctx.job.jobId, replayed.shuffleSnapshots);
}

/** The answers coordinator `operatorId` gave the finished attempt, as its event recorded them. */
function recordedAnswers(e: ExecutionVertexFinishedEvent__Output, operatorId: string): string[] | undefined {
  const inc = e.coordinator_increments.find((c) => c.operator_id === operatorId);
  return inc && OperatorCoordinatorHolder.responsesOfIncrement(inc.state);
}

/**
 * User coordinators are restored from their newest snapshot: executions of their vertices that
 * finished after it rerun, unless their events recorded every answer they got and the
 * coordinator can take them back (`subtaskAdopted`). All of a vertex whose coordinator has no
 * batch snapshots rerun unless the vertex had finished (FLIP-383 drops finished events no
 * snapshot covers).
 */
function dropFinishedNotCoveredByCoordinators(ctx: ReplayApplication['ctx'], replayed: ReplayedJobState): number {
  let dropped = 0;
  for (const [vertexId, holders] of ctx.coordinators.userEntries()) {
    for (const h of holders)
      if (h.supportsBatchSnapshot())
        dropped += replayed.dropFinishedAfterSnapshot(
          vertexId,
          h.operatorId,
          (e) => h.supportsAdoption() && recordedAnswers(e, h.operatorId) !== undefined,
        );
    const parallelism = replayed.initialized.get(vertexId)?.parallelism ?? 0;
    const unfinished = replayed.finishedOf(vertexId).length < parallelism;
    if (unfinished && holders.some((h) => !h.supportsBatchSnapshot()))
      dropped += replayed.dropFinishedAfterSnapshot(vertexId);
  }
  if (dropped > 0) ctx.logger.info({ dropped }, 'executions that finished after their coordinator snapshot run again');
  return dropped;
}
