import { IllegalStateError, executionVertexKey } from '@rebound/core';
import type {
  ExecutionState__Output,
  IOMetrics__Output,
  JobEdge__Output,
  JobGraph__Output,
  JobVertex__Output,
  ResultPartitionId__Output,
  TaskManagerLocation__Output,
} from '@rebound/core';
import type { SubpartitionRange } from './parallelism-decider.js';

export type ExecutionState = Exclude<ExecutionState__Output, 'EXECUTION_STATE_UNSPECIFIED'>;

/** One subtask of a job vertex; its current attempt is the only one that counts. */
export class ExecutionVertex {
  attempt = 0;
  /**
   * Epoch of the leader that deployed the current attempt (0 before it is deployed). Attempt
   * numbers can repeat across leaders; attempt and epoch together cannot.
   */
  attemptEpoch = 0;
  state: ExecutionState = 'CREATED';
  location: TaskManagerLocation__Output | undefined;
  ioMetrics: IOMetrics__Output | undefined;
  finishedAtMs = 0;
  /**
   * The file a sink subtask's current attempt writes, renamed into place when the job commits
   * ('' when the vertex has no sink or the attempt was not deployed). Kept here so that the
   * scheduler, the commit and recovery see one value per attempt.
   */
  sinkTempFile = '';

  constructor(
    readonly jobVertex: ExecutionJobVertex,
    readonly subtask: number,
  ) {}

  get key(): string {
    return executionVertexKey(this.jobVertex.id, this.subtask);
  }

  /** The partition the current attempt produced (or will produce). */
  partitionId(): ResultPartitionId__Output {
    return {
      job_id: this.jobVertex.graph.jobId,
      vertex_id: this.jobVertex.id,
      subtask: this.subtask,
      attempt: this.attempt,
      epoch: this.attemptEpoch,
    };
  }
}

/** A job vertex at runtime: its decided parallelism, input ranges and subtasks. */
export class ExecutionJobVertex {
  parallelism = 0;
  /** Per input: one subpartition range per subtask (all producers of that input). */
  inputRanges: SubpartitionRange[][] = [];
  vertices: ExecutionVertex[] = [];
  /** True when the parallelism was decided from the producers' bytes. */
  decidedAdaptively = false;
  readonly consumers: ExecutionJobVertex[] = [];
  readonly producers: ExecutionJobVertex[] = [];

  constructor(
    readonly graph: ExecutionGraph,
    readonly jobVertex: JobVertex__Output,
  ) {}

  get id(): string {
    return this.jobVertex.id;
  }
  get name(): string {
    return this.jobVertex.name;
  }
  get isInitialized(): boolean {
    return this.vertices.length > 0;
  }
  get isSource(): boolean {
    return this.jobVertex.source_operator_id !== '';
  }
  inputEdge(index: number): JobEdge__Output {
    const e = this.jobVertex.inputs[index];
    if (!e) throw new IllegalStateError(`vertex ${this.id} has no input ${index}`);
    return e;
  }
  isFinished(): boolean {
    return this.isInitialized && this.vertices.every((v) => v.state === 'FINISHED');
  }
  countByState(): Record<ExecutionState, number> {
    const counts: Record<ExecutionState, number> = {
      CREATED: 0,
      SCHEDULED: 0,
      DEPLOYING: 0,
      RUNNING: 0,
      FINISHED: 0,
      CANCELING: 0,
      CANCELED: 0,
      FAILED: 0,
    };
    for (const v of this.vertices) counts[v.state]++;
    return counts;
  }
}

/**
 * Listener of the state changes that matter for JobMaster-failover recovery. The ExecutionGraph
 * is the one place where these changes happen, so the JobEventStore sees every one of them.
 */
export interface ExecutionGraphListener {
  onVertexInitialized?(ejv: ExecutionJobVertex): void;
  onExecutionFinished?(ev: ExecutionVertex): void;
  onExecutionsReset?(evs: readonly ExecutionVertex[]): void;
}

/**
 * The runtime view of a job. All transitions of vertices go through its methods; the scheduler
 * decides *when*, the graph records *what*.
 */
export class ExecutionGraph {
  readonly vertices: ExecutionJobVertex[];
  private readonly byId = new Map<string, ExecutionJobVertex>();
  private readonly listeners: ExecutionGraphListener[] = [];

  constructor(readonly jobGraph: JobGraph__Output) {
    this.vertices = jobGraph.vertices.map((jv) => new ExecutionJobVertex(this, jv));
    for (const v of this.vertices) this.byId.set(v.id, v);
    for (const v of this.vertices) {
      for (const edge of v.jobVertex.inputs) {
        const producer = this.vertex(edge.source_vertex_id);
        producer.consumers.push(v);
        v.producers.push(producer);
      }
    }
  }

  get jobId(): string {
    return this.jobGraph.job_id;
  }

  addListener(l: ExecutionGraphListener): void {
    this.listeners.push(l);
  }

  vertex(id: string): ExecutionJobVertex {
    const v = this.byId.get(id);
    if (!v) throw new IllegalStateError(`unknown vertex ${id}`);
    return v;
  }

  findVertex(id: string): ExecutionJobVertex | undefined {
    return this.byId.get(id);
  }

  executionVertex(vertexId: string, subtask: number): ExecutionVertex | undefined {
    return this.byId.get(vertexId)?.vertices[subtask];
  }

  allExecutionVertices(): ExecutionVertex[] {
    return this.vertices.flatMap((v) => v.vertices);
  }

  isFinished(): boolean {
    return this.vertices.every((v) => v.isFinished());
  }

  /** Fixes a vertex's parallelism and input ranges and creates its subtasks. */
  initializeVertex(
    ejv: ExecutionJobVertex,
    parallelism: number,
    inputRanges: SubpartitionRange[][],
    adaptive: boolean,
  ): void {
    if (ejv.isInitialized) throw new IllegalStateError(`vertex ${ejv.id} is already initialized`);
    if (parallelism < 1) throw new IllegalStateError(`vertex ${ejv.id}: parallelism ${parallelism} < 1`);
    ejv.parallelism = parallelism;
    ejv.inputRanges = inputRanges;
    ejv.decidedAdaptively = adaptive;
    ejv.vertices = Array.from({ length: parallelism }, (_, i) => new ExecutionVertex(ejv, i));
    for (const l of this.listeners) l.onVertexInitialized?.(ejv);
  }

  transition(ev: ExecutionVertex, to: ExecutionState): void {
    ev.state = to;
  }

  markFinished(
    ev: ExecutionVertex,
    location: TaskManagerLocation__Output,
    metrics: IOMetrics__Output,
    nowMs: number,
  ): void {
    ev.state = 'FINISHED';
    ev.location = location;
    ev.ioMetrics = metrics;
    ev.finishedAtMs = nowMs;
    for (const l of this.listeners) l.onExecutionFinished?.(ev);
  }

  /** Starts new attempts for `evs`: each gets attempt+1 and goes back to CREATED. */
  resetForNewExecutions(evs: readonly ExecutionVertex[]): void {
    if (evs.length === 0) return;
    for (const ev of evs) {
      ev.attempt++;
      ev.attemptEpoch = 0;
      ev.state = 'CREATED';
      ev.location = undefined;
      ev.ioMetrics = undefined;
      ev.finishedAtMs = 0;
      ev.sinkTempFile = '';
    }
    for (const l of this.listeners) l.onExecutionsReset?.(evs);
  }

  /**
   * Number of subpartitions `producer` writes for its consumer: the consumer's parallelism when it
   * is fixed, else the consumer's max parallelism (the adaptive scheduler splits them into ranges).
   */
  numSubpartitionsFor(producer: ExecutionJobVertex, defaultMaxParallelism: number): number {
    const consumer = producer.consumers[0];
    if (!consumer) return 0;
    const edge = consumer.jobVertex.inputs.find((e) => e.source_vertex_id === producer.id);
    if (edge?.distribution === 'BROADCAST') return 1;
    if (consumer.jobVertex.parallelism > 0) return consumer.jobVertex.parallelism;
    return consumer.jobVertex.max_parallelism > 0 ? consumer.jobVertex.max_parallelism : defaultMaxParallelism;
  }
}
