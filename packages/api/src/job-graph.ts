import { resolve } from 'node:path';
import type { JobEdge, JobGraph, JobVertex } from '@rebound/core';
import { codeOf, firstLine, jobInvalid, moduleInvalid } from './errors.js';
import { ExecutionEnvironment } from './environment.js';
import { isJobDefinition, type JobDefinition } from './job.js';
import type { Transformation } from './transformations.js';

export interface BuiltJob {
  readonly name: string;
  /** job_id and module_digest are left empty: the client and the Dispatcher fill them in. */
  readonly graph: JobGraph;
  readonly operators: ReadonlyMap<string, Transformation>;
}

export interface BuildJobOptions {
  /** Parallelism of source vertices without an explicit one (before the split-count estimate). */
  readonly defaultSourceParallelism?: number;
  /** Relative paths of the job are resolved against it (default: process.cwd()). */
  readonly cwd?: string;
  /**
   * Ask sources for their number of splits (default true), which checks that their input exists
   * before anything is submitted. It does not set their parallelism: a source without one keeps
   * parallelism 0 and the JobMaster decides it when the job starts, from the split count AND the
   * cluster's slots: one subtask per slot where there are 4+ splits per slot, so a subtask pulls
   * several splits through one combiner into one partition (issue 13: about half the CPU of a
   * large-vocabulary wordcount), else one per split. Processes that only
   * need the operators (the graph comes from the JobGraphStore) skip the listing.
   */
  readonly estimateSplits?: boolean;
}

/** Runs the job's build function and returns its operators by id. */
export async function buildOperators(
  def: JobDefinition,
  args: readonly string[],
  options: Pick<BuildJobOptions, 'cwd'> = {},
): Promise<Map<string, Transformation>> {
  if (!isJobDefinition(def)) {
    throw moduleInvalid(
      "not a job definition: a job module must end with export default defineJob('name', (env, args) => { ... })",
    );
  }
  const env = new ExecutionEnvironment({ cwd: options.cwd });
  try {
    await def.build(env, [...args]);
  } catch (err) {
    if (codeOf(err) === 'JOB_INVALID') throw err;
    throw jobInvalid(`job '${def.name}' failed to build: ${firstLine(err)}`, err);
  } finally {
    env.seal();
  }
  return new Map(env.transformations().map((t) => [t.id, t]));
}

interface VertexBuilder {
  readonly vertex: Required<Pick<JobVertex, 'id' | 'operator_ids' | 'inputs'>> & JobVertex;
  readonly ops: Transformation[];
  tail: Transformation;
  consumed: boolean;
}

/**
 * Builds the job and its JobGraph. Operators are chained into vertices: a vertex starts at a
 * source, a reduce (fed through a HASH edge whose producer applies the keyBy and pre-aggregates
 * with the reduce), a join (two HASH edges: left, then right) or a union (a HASH edge per input); map, flatMap, filter, process and sink
 * chain into their input's vertex.
 */
export async function buildJob(
  def: JobDefinition,
  args: readonly string[],
  options: BuildJobOptions = {},
): Promise<BuiltJob> {
  const operators = await buildOperators(def, args, options);
  const vertexOf = new Map<string, VertexBuilder>(); // operator id → its vertex (keyBy: its input's)
  const vertices: VertexBuilder[] = [];

  const startVertex = (head: Transformation, inputs: JobEdge[]): VertexBuilder => {
    const v: VertexBuilder = {
      vertex: { id: `v-${head.id}`, operator_ids: [head.id], inputs },
      ops: [head],
      tail: head,
      consumed: false,
    };
    vertices.push(v);
    vertexOf.set(head.id, v);
    return v;
  };
  const hashEdge = (keyById: string, combinerId: string): JobEdge => {
    const keyBy = operators.get(keyById)!;
    if (keyBy.kind !== 'keyBy') throw jobInvalid(`operator ${keyById} was expected to be a keyBy, is a ${keyBy.kind}`);
    const producer = vertexOf.get(keyBy.input)!;
    producer.consumed = true;
    return {
      source_vertex_id: producer.vertex.id,
      distribution: 'HASH',
      key_selector_id: keyBy.id,
      combiner_id: combinerId,
    };
  };

  for (const t of operators.values()) {
    switch (t.kind) {
      case 'source':
        startVertex(t, []);
        break;
      case 'keyBy':
        vertexOf.set(t.id, vertexOf.get(t.input)!);
        break;
      case 'reduce':
        startVertex(t, [hashEdge(t.input, t.id)]);
        break;
      case 'join':
        startVertex(t, [hashEdge(t.left, ''), hashEdge(t.right, '')]);
        break;
      case 'union':
        startVertex(
          t,
          t.inputs.map((id) => hashEdge(id, '')),
        );
        break;
      case 'map':
      case 'flatMap':
      case 'filter':
      case 'process':
      case 'sink': {
        const v = vertexOf.get(t.input)!;
        v.ops.push(t);
        v.vertex.operator_ids.push(t.id);
        v.tail = t;
        vertexOf.set(t.id, v);
        break;
      }
    }
  }

  if (![...operators.values()].some((t) => t.kind === 'sink')) {
    throw jobInvalid(`job '${def.name}' defines no sink: write its result with writeAsText(path)`);
  }
  if ([...operators.values()].filter((t) => t.kind === 'sink' && t.collect).length > 1) {
    throw jobInvalid(`job '${def.name}' calls collect() more than once: a job collects one dataset`);
  }
  for (const v of vertices) {
    if (v.tail.kind !== 'sink' && !v.consumed) {
      throw jobInvalid(
        `job '${def.name}': the output of operator '${v.tail.name}' (${v.tail.id}) is never used; ` +
          'end it with a sink (writeAsText) or remove it',
      );
    }
  }

  const graphVertices: JobVertex[] = vertices.map((v) => finishVertex(v, options));
  const graph: JobGraph = {
    job_id: '',
    name: def.name,
    vertices: graphVertices,
    job_args: [...args],
    config: {},
    module_digest: '',
    submitted_at_ms: 0,
    working_directory: resolve(options.cwd ?? process.cwd()),
  };
  return { name: def.name, graph, operators };
}

function finishVertex(v: VertexBuilder, options: BuildJobOptions): JobVertex {
  let explicit = 0;
  let explicitBy: Transformation | undefined;
  for (const op of v.ops) {
    const p = op.parallelism ?? 0;
    if (p <= 0) continue;
    if (explicit > 0 && p !== explicit) {
      throw jobInvalid(
        `operator '${op.name}' (${op.id}) sets parallelism ${p} but is chained with '${explicitBy!.name}' (${explicitBy!.id}) ` +
          `which sets ${explicit}; chained operators run in one task and share its parallelism`,
      );
    }
    explicit = p;
    explicitBy = op;
  }
  const head = v.ops[0]!;
  const tail = v.tail;
  let parallelism = explicit;
  if (head.kind === 'source' && parallelism === 0) {
    if (options.defaultSourceParallelism !== undefined && options.defaultSourceParallelism > 0) {
      parallelism = options.defaultSourceParallelism;
    } else if (options.estimateSplits !== false) {
      head.source.estimateSplits?.();
    }
  }
  return {
    ...v.vertex,
    name: v.ops.map((op) => op.name).join(' -> '),
    parallelism,
    max_parallelism: 0,
    source_operator_id: head.kind === 'source' ? head.id : '',
    sink: tail.kind === 'sink' ? { operator_id: tail.id, path: tail.path, collect: tail.collect === true } : null,
    source_supports_batch_snapshot: head.kind === 'source' ? head.source.supportsBatchSnapshot === true : false,
  };
}
