import type { ResultPartitionId__Output } from '@rebound/core';
import type { ExecutionGraph, ExecutionJobVertex, ExecutionVertex } from '../execution-graph.js';
import type { ShuffleMaster } from '../shuffle/shuffle-master.js';

/** A finished execution's partition as a reconciling leader follows it. */
export interface FinishedOutput {
  readonly ev: ExecutionVertex;
  /** The attempt and deploying epoch that its partition id names. */
  readonly attempt: number;
  readonly epoch: number;
  /** Ids of the holders the execution wrote it to. */
  readonly holders: readonly string[];
  /** A consumer that has not finished still reads it. */
  readonly needed: boolean;
}

/** A producing vertex: its subtasks, and the outputs of those that had finished, by subtask. */
interface ProducerOutputs {
  readonly ejv: ExecutionJobVertex;
  readonly bySubtask: (FinishedOutput | undefined)[];
}

/**
 * The finished executions of a job whose partitions consumers read, found by the partition ids
 * holders report: by vertex and subtask, then attempt and epoch compared. A new leader matches
 * every reported partition (10,000s of them) against these; a string key per partition and per
 * lookup was most of its reconciliation's own time and garbage.
 */
export class FinishedOutputs {
  /** Needed outputs, in graph order (vertices, then subtasks). */
  readonly needed: FinishedOutput[] = [];
  private readonly producers = new Map<string, ProducerOutputs>();

  private constructor(private readonly jobId: string) {}

  /**
   * The graph's finished executions as they stand now, with the holders that keep each output
   * (its TaskManager, or the shuffle workers it wrote to), as `shuffleMaster` knows them now.
   */
  static of(graph: ExecutionGraph, shuffleMaster: Pick<ShuffleMaster, 'holdersOf'>): FinishedOutputs {
    const jobId = graph.jobId;
    const outputs = new FinishedOutputs(jobId);
    for (const ejv of graph.vertices) {
      if (ejv.consumers.length === 0) continue;
      const needed = ejv.consumers.some((c) => !c.isFinished());
      const bySubtask = new Array<FinishedOutput | undefined>(ejv.vertices.length).fill(undefined);
      for (const ev of ejv.vertices) {
        if (ev.state !== 'FINISHED') continue;
        const holders = ev.location
          ? shuffleMaster.holdersOf(jobId, ev.partitionId(), ev.location).map((h) => h.id)
          : [];
        const output: FinishedOutput = { ev, attempt: ev.attempt, epoch: ev.attemptEpoch, holders, needed };
        bySubtask[ev.subtask] = output;
        if (needed) outputs.needed.push(output);
      }
      outputs.producers.set(ejv.id, { ejv, bySubtask });
    }
    return outputs;
  }

  /** The subtask of this job that partition `id` names, if it produces partitions consumers read. */
  producerOf(id: ResultPartitionId__Output): ExecutionVertex | undefined {
    if (id.job_id !== this.jobId) return undefined;
    return this.producers.get(id.vertex_id)?.ejv.vertices[id.subtask];
  }

  /** The finished execution whose attempt produced partition `id`, if any. */
  find(id: ResultPartitionId__Output): FinishedOutput | undefined {
    if (id.job_id !== this.jobId) return undefined;
    const o = this.producers.get(id.vertex_id)?.bySubtask[id.subtask];
    return o !== undefined && o.attempt === id.attempt && o.epoch === id.epoch ? o : undefined;
  }

  /** The holders of the needed outputs. */
  neededHolders(): Set<string> {
    const ids = new Set<string>();
    for (const o of this.needed) for (const id of o.holders) ids.add(id);
    return ids;
  }
}
