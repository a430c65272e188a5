import { errorMessage, JobInvalidError } from '@rebound/core';
import type { ExecutionGraph, ExecutionJobVertex, ExecutionVertex } from './execution-graph.js';
import type { OperatorCoordinatorsContext } from './operator-coordinators-context.js';
import type { CoordinatorHolderApi, SourceCoordinatorApi, UserOperatorInfo } from './user-code/job-user-code.js';

/**
 * The coordinators of one job: a SourceCoordinator per source vertex and the user coordinators
 * (`DataSet.process(create, { coordinator })`) per vertex, created when their vertex is
 * initialized. Owns the restart-all rule: a vertex whose coordinator has no batch snapshots and
 * that was recovered as finished reruns all its subtasks when any one of them must rerun.
 */
export class OperatorCoordinators {
  private readonly sources = new Map<string, SourceCoordinatorApi>();
  /** User coordinators by vertex id. */
  private readonly user = new Map<string, CoordinatorHolderApi[]>();
  /** Vertices without batch snapshots recovered as finished: any reset of one subtask resets all. */
  private readonly restartAllOnReset = new Set<string>();

  constructor(private readonly ctx: OperatorCoordinatorsContext) {}

  source(vertexId: string): SourceCoordinatorApi | undefined {
    return this.sources.get(vertexId);
  }

  userOf(vertexId: string): readonly CoordinatorHolderApi[] {
    return this.user.get(vertexId) ?? [];
  }

  /** Source coordinators by vertex id. */
  sourceEntries(): IterableIterator<[string, SourceCoordinatorApi]> {
    return this.sources.entries();
  }

  /** User coordinators by vertex id. */
  userEntries(): IterableIterator<[string, readonly CoordinatorHolderApi[]]> {
    return this.user.entries();
  }

  /** The job module's source operator of source vertex `ejv`. */
  sourceOperator(ejv: ExecutionJobVertex): UserOperatorInfo {
    const op = this.ctx.userCode.operator(ejv.jobVertex.source_operator_id);
    if (op?.kind !== 'source') {
      throw new JobInvalidError(
        `vertex '${ejv.name}': the job module has no source ${ejv.jobVertex.source_operator_id}`,
      );
    }
    return op;
  }

  /** The source's `estimateSplits()` (user code). */
  estimateSplits(ejv: ExecutionJobVertex): number | undefined {
    return this.ctx.userCode.estimateSplits(this.sourceOperator(ejv).id);
  }

  /** Creates (does not start) the SourceCoordinator of source vertex `ejv`. */
  createSource(ejv: ExecutionJobVertex, parallelism: number): SourceCoordinatorApi {
    const op = this.sourceOperator(ejv);
    const coordinator = this.ctx.userCode.createSourceCoordinator(op.id, ejv.name, parallelism);
    this.sources.set(ejv.id, coordinator);
    return coordinator;
  }

  /** Creates and starts the user coordinators of a vertex that was just initialized. */
  async createUserCoordinators(ejv: ExecutionJobVertex, started = true): Promise<void> {
    const holders = ejv.jobVertex.operator_ids
      .map((id) => this.ctx.userCode.operator(id))
      .filter((op): op is UserOperatorInfo => op?.hasCoordinator === true)
      .map((op) =>
        this.ctx.userCode.createCoordinatorHolder({
          vertexId: ejv.id,
          operatorId: op.id,
          operatorName: op.name,
          parallelism: ejv.parallelism,
          maxHeldResponses: this.ctx.maxHeldResponses,
        }),
      );
    if (holders.length === 0) return;
    this.user.set(ejv.id, holders);
    if (started) await Promise.all(holders.map((h) => h.start()));
  }

  /** Marks a vertex whose coordinator lost its state: a later reset of one subtask resets all. */
  restartAllOnResetOf(vertexId: string): void {
    this.restartAllOnReset.add(vertexId);
  }

  /** Runs a call into user coordinator code; a failure fails the job (its state is now unknown). */
  private userCoordinatorCall(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.ctx.onFailure(errorMessage(err));
    }
  }

  subtaskFinished(ev: ExecutionVertex): void {
    this.sources.get(ev.jobVertex.id)?.subtaskFinished(ev.subtask, ev.attempt);
    for (const h of this.userOf(ev.jobVertex.id))
      this.userCoordinatorCall(() => h.subtaskFinished(ev.subtask, ev.attempt));
  }

  notifyOfReset(evs: readonly ExecutionVertex[]): void {
    for (const ev of evs) {
      this.sources.get(ev.jobVertex.id)?.subtaskReset(ev.subtask, ev.attempt + 1);
      for (const h of this.userOf(ev.jobVertex.id))
        this.userCoordinatorCall(() => h.subtaskReset(ev.subtask, ev.attempt + 1));
    }
  }

  /** Adds all subtasks of sources that must rerun as a whole (no batch snapshot, recovered finished). */
  withWholeSources(evs: ExecutionVertex[]): ExecutionVertex[] {
    const out = new Set(evs);
    for (const ev of evs) {
      if (!this.restartAllOnReset.has(ev.jobVertex.id)) continue;
      for (const other of ev.jobVertex.vertices) {
        if (other.state === 'FINISHED' || other.state === 'CREATED') out.add(other);
      }
    }
    return [...out];
  }

  /** After a whole-vertex reset, the vertex's enumerator and user coordinators start over. */
  afterSourceResets(graph: ExecutionGraph, evs: readonly ExecutionVertex[]): void {
    const vertices = new Set(evs.map((ev) => ev.jobVertex.id));
    for (const id of vertices) {
      if (!this.restartAllOnReset.has(id)) continue;
      this.restartAllOnReset.delete(id);
      const ejv = graph.vertex(id);
      for (const h of this.userOf(id)) {
        this.ctx.logger.info(
          { vertexId: id, operatorId: h.operatorId },
          'coordinator without batch snapshots starts over with all its subtasks',
        );
        void h.resetToCheckpoint(undefined).catch((err: unknown) => this.ctx.onFailure(errorMessage(err)));
      }
      const coordinator = this.sources.get(id);
      if (!coordinator) continue;
      this.ctx.logger.info(
        { vertexId: id },
        'source without batch snapshots restarts all its subtasks with a fresh enumerator',
      );
      void coordinator
        .restore(undefined, new Map(), new Map(ejv.vertices.map((ev) => [ev.subtask, ev.attempt])))
        .catch((err: unknown) => this.ctx.onFailure(errorMessage(err)));
    }
  }

  async close(): Promise<void> {
    for (const c of this.sources.values()) await c.close();
    for (const hs of this.user.values()) for (const h of hs) await h.close();
  }

  /** Closes and forgets every coordinator (the job starts over). */
  async clear(): Promise<void> {
    await this.close();
    this.sources.clear();
    this.user.clear();
  }
}
