import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { JobModuleBundle } from '@rebound/api';
import { Configuration, type JobGraph, JobModuleInvalidError, type JobVertex } from '@rebound/core';
import { parseDynamicProperties } from './args.js';
import { renderTable } from './format.js';
import { loadJobForClient } from './job-module.js';
import { printJson, printLines, type CliIo } from './io.js';
import type { InfoOptions } from './options.js';

/** What `submit` and `info` build on the client from a job module. */
export interface JobPlan {
  readonly name: string;
  readonly jobFile: string;
  /** job_id, module_digest and submitted_at_ms are still empty. */
  readonly graph: JobGraph;
  /** The job's `-D` values (with parallelism.default when -p was given). */
  readonly config: Record<string, string>;
}

const DEFAULT_PARALLELISM = 'parallelism.default';
const SOURCE_PARALLELISM = 'execution.batch.adaptive.auto-parallelism.default-source-parallelism';

/**
 * Gives every vertex that sets no parallelism the job's default parallelism, as Flink's client
 * does for `flink run -p` / parallelism.default: such vertices run with that many subtasks instead
 * of the adaptive decision. Vertices with an explicit parallelism keep it.
 */
export function applyDefaultParallelism(
  vertices: readonly JobVertex[],
  explicitSources: ReadonlySet<string>,
  parallelism: number,
): JobVertex[] {
  return vertices.map((v) => {
    const isSource = (v.source_operator_id ?? '') !== '';
    if (isSource) return explicitSources.has(v.id ?? '') ? v : { ...v, parallelism };
    return (v.parallelism ?? 0) > 0 ? v : { ...v, parallelism };
  });
}

/**
 * Loads and builds a job module: everything checkable on the client is checked here, before the
 * cluster is asked anything. `-p` wins over `-D parallelism.default`; a source's own
 * `default-source-parallelism` wins over both for sources, as it is the more specific key.
 */
export async function buildJobPlan(
  opts: { jobFile: string; jobArgs: readonly string[]; dynamic: readonly string[]; parallelism?: number },
  io: CliIo,
): Promise<JobPlan & { readonly jobFilePath: string; readonly bundle: JobModuleBundle }> {
  const jobConfig = parseDynamicProperties(opts.dynamic);
  if (opts.parallelism !== undefined) jobConfig[DEFAULT_PARALLELISM] = String(opts.parallelism);
  const config = Configuration.of(jobConfig);
  const jobFile = resolve(io.cwd, opts.jobFile);
  const st = await stat(jobFile).catch(() => undefined);
  if (!st?.isFile()) {
    throw new JobModuleInvalidError(
      `job file ${opts.jobFile} not found; pass the path of a .ts or .js module whose default export is defineJob(...)`,
    );
  }
  const api = await import('@rebound/api');
  const { definition, bundle } = await loadJobForClient(jobFile);
  const sourceParallelism = jobConfig[SOURCE_PARALLELISM] !== undefined ? config.getInt(SOURCE_PARALLELISM) : 0;
  const defaultParallelism = jobConfig[DEFAULT_PARALLELISM] !== undefined ? config.getInt(DEFAULT_PARALLELISM) : 0;
  // Built once without any default, to tell the sources that set their own parallelism apart.
  const bare = await api.buildJob(definition, opts.jobArgs, { cwd: io.cwd, estimateSplits: false });
  const explicitSources = new Set(
    bare.graph.vertices
      ?.filter((v) => (v.source_operator_id ?? '') !== '' && (v.parallelism ?? 0) > 0)
      .map((v) => v.id ?? ''),
  );
  const built = await api.buildJob(definition, opts.jobArgs, {
    cwd: io.cwd,
    ...(sourceParallelism > 0 ? { defaultSourceParallelism: sourceParallelism } : {}),
  });
  let vertices = built.graph.vertices ?? [];
  if (defaultParallelism > 0) {
    const sourcesWithOwnDefault =
      sourceParallelism > 0
        ? new Set(vertices.filter((v) => (v.source_operator_id ?? '') !== '').map((v) => v.id ?? ''))
        : explicitSources;
    vertices = applyDefaultParallelism(vertices, sourcesWithOwnDefault, defaultParallelism);
  }
  return {
    name: built.name,
    jobFile: opts.jobFile,
    jobFilePath: jobFile,
    bundle,
    graph: { ...built.graph, vertices },
    config: jobConfig,
  };
}

/** `rebound info --json`: the plan as plain data. */
export interface PlanJson {
  readonly name: string;
  readonly jobFile: string;
  readonly config: Record<string, string>;
  readonly vertices: {
    readonly id: string;
    readonly name: string;
    /** null: decided by the adaptive batch scheduler from the data its inputs produce. */
    readonly parallelism: number | null;
    readonly maxParallelism: number | null;
    readonly operators: readonly string[];
    readonly source: { readonly operatorId: string; readonly supportsBatchSnapshot: boolean } | null;
    readonly sink: { readonly operatorId: string; readonly path: string } | null;
  }[];
  readonly edges: {
    readonly from: string;
    readonly to: string;
    readonly distribution: string;
    readonly combiner: boolean;
  }[];
}

export function planToJson(plan: JobPlan): PlanJson {
  const vertices = plan.graph.vertices ?? [];
  return {
    name: plan.name,
    jobFile: plan.jobFile,
    config: plan.config,
    vertices: vertices.map((v) => ({
      id: v.id ?? '',
      name: v.name ?? '',
      parallelism: (v.parallelism ?? 0) > 0 ? v.parallelism! : null,
      maxParallelism: (v.max_parallelism ?? 0) > 0 ? v.max_parallelism! : null,
      operators: [...(v.operator_ids ?? [])],
      source: v.source_operator_id
        ? { operatorId: v.source_operator_id, supportsBatchSnapshot: v.source_supports_batch_snapshot === true }
        : null,
      sink: v.sink ? { operatorId: v.sink.operator_id ?? '', path: v.sink.path ?? '' } : null,
    })),
    edges: vertices.flatMap((v) =>
      (v.inputs ?? []).map((e) => ({
        from: e.source_vertex_id ?? '',
        to: v.id ?? '',
        distribution: String(e.distribution ?? 'HASH'),
        combiner: (e.combiner_id ?? '') !== '',
      })),
    ),
  };
}

export function renderPlan(p: PlanJson): string[] {
  const nameOf = new Map(p.vertices.map((v) => [v.id, v.name]));
  const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  const lines = [
    `Job ${p.name} (${p.jobFile}): ${count(p.vertices.length, 'vertex', 'vertices')}, ${count(p.edges.length, 'edge', 'edges')}; not run`,
    '',
  ];
  lines.push(
    ...renderTable(
      ['VERTEX', 'ID', 'PARALLELISM', 'ROLE'],
      p.vertices.map((v) => [
        v.name,
        v.id,
        v.parallelism === null ? 'adaptive' : String(v.parallelism),
        [
          v.source
            ? `source${v.source.supportsBatchSnapshot ? ' (batch snapshots: resumes after a failover)' : ' (no batch snapshots: reruns whole after a failover)'}`
            : '',
          v.sink ? `sink → ${v.sink.path}` : '',
        ]
          .filter(Boolean)
          .join('; ') || '-',
      ]),
    ).map((l) => `  ${l}`),
  );
  if (p.edges.length > 0) {
    lines.push('', 'Edges (all BLOCKING: the producer finishes before its consumers start):');
    for (const e of p.edges)
      lines.push(
        `  ${nameOf.get(e.from) ?? e.from} ─${e.distribution}${e.combiner ? ', pre-aggregated' : ''}→ ${nameOf.get(e.to) ?? e.to}`,
      );
  }
  const overrides = Object.entries(p.config);
  if (overrides.length > 0) lines.push('', 'Job configuration:', ...overrides.map(([k, v]) => `  ${k} = ${v}`));
  return lines;
}

export async function info(opts: InfoOptions, io: CliIo): Promise<number> {
  const plan = planToJson(await buildJobPlan(opts, io));
  if (opts.json) printJson(io.stdout, plan);
  else printLines(io.stdout, renderPlan(plan));
  return 0;
}
