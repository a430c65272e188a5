import {
  ErrorCode,
  fromServiceError,
  IllegalStateError,
  isTerminalJobState,
  type JobGraph,
  type JobStatus__Output,
  type JobSummary__Output,
  newJobId,
} from '@rebound/core';
import { UsageError } from './errors.js';
import { pickJobId } from './job-id.js';
import { ClusterClient } from './client.js';
import { clientConfiguration, type ClusterTargetOptions } from './cluster-target.js';
import { formatBytes, formatDurationMs } from './format.js';
import { followJob } from './follow.js';
import { printJson, printLines, type CliIo } from './io.js';
import { jobStatusToJson, jobSummariesToJson, renderJobList, renderJobStatus } from './job-view.js';
import { buildJobPlan } from './plan.js';
import type {
  CancelOptions,
  ListOptions,
  ResultsOptions,
  StatusOptions,
  SubmitOptions,
  WatchOptions,
} from './options.js';
import { outputFormatFor, printJobResult, type OutputFormat } from './results.js';
import { localReruns } from './reruns.js';
import { progressSinkFor, type ProgressSink } from './progress.js';
import { wrapToWidth } from './width.js';

/** Follow mode waits this long for a leader by default: a failover, or a JobMaster being restarted. */
const DEFAULT_RECONNECT_TIMEOUT_MS = 5 * 60_000;

function connect(opts: ClusterTargetOptions, io: CliIo): Promise<ClusterClient> {
  return ClusterClient.connect(opts, { cwd: io.cwd });
}

/** A full job id, a unique prefix of one (as `watch` shows), or a job's name, looked up with ListJobs. */
async function resolveJobId(client: ClusterClient, given: string): Promise<string> {
  let jobs: Promise<JobSummary__Output[]> | undefined;
  const list = (): Promise<JobSummary__Output[]> => (jobs ??= client.listJobs());
  return pickJobId(
    given,
    async () => (await list()).map((j) => j.job_id),
    async () => (await list()).map((j) => ({ id: j.job_id, name: j.name, submittedAtMs: Number(j.submitted_at_ms) })),
  );
}

async function withClient<T>(
  opts: ClusterTargetOptions,
  io: CliIo,
  fn: (client: ClusterClient) => Promise<T>,
): Promise<T> {
  const client = await connect(opts, io);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** The last line of `submit` and `watch`: how the job ended and what its failovers kept. */
export function endLine(status: JobStatus__Output): string {
  const took =
    status.finished_at_ms > 0 && status.submitted_at_ms > 0
      ? ` in ${formatDurationMs(status.finished_at_ms - status.submitted_at_ms)}`
      : '';
  const recovered = status.recoveries.length;
  const reused = status.recoveries.reduce((n, r) => n + r.executions_recovered, 0);
  const rerun = status.recoveries.reduce((n, r) => n + r.executions_reset, 0);
  const bytes = status.recoveries.reduce((n, r) => n + r.partition_bytes_reused, 0);
  const adopted = status.recoveries.reduce((n, r) => n + r.running_tasks_adopted, 0);
  // keep-running-tasks: tasks that carried on through the failover instead of starting over.
  const carriedOn = adopted > 0 ? `, ${adopted} running task${adopted === 1 ? '' : 's'} adopted` : '';
  const failover =
    recovered > 0
      ? ` after ${recovered} JobMaster failover${recovered === 1 ? '' : 's'}: ${reused} finished task${reused === 1 ? '' : 's'} kept, ${rerun} rerun${carriedOn}, ${formatBytes(bytes)} of partitions reused`
      : '';
  return `job ${status.job_id} ${status.state}${took}${failover}`;
}

/** Exit 0 only for FINISHED; anything else is one `rebound:` line on stderr and exit 1. */
function outcome(status: JobStatus__Output): number {
  if (status.state === 'FINISHED') return 0;
  const why = status.failure ? `: ${status.failure.split('\n')[0]}` : '';
  throw new IllegalStateError(`job ${status.job_id} ended ${status.state}${why}`);
}

async function followAndReport(
  client: ClusterClient,
  jobId: string,
  sink: ProgressSink,
  opts: { pollIntervalMs: number; reconnectTimeoutMs?: number; json: boolean },
  io: CliIo,
  announceEnd: boolean,
): Promise<number> {
  const status = await followJob(client, jobId, sink, {
    pollIntervalMs: opts.pollIntervalMs,
    reconnectTimeoutMs: opts.reconnectTimeoutMs ?? DEFAULT_RECONNECT_TIMEOUT_MS,
  });
  if (announceEnd && !opts.json)
    printLines(
      io.stdout,
      io.stdout.isTTY ? wrapToWidth(endLine(status), io.stdout.columns ?? 80, '  ') : [endLine(status)],
    );
  return outcome(status);
}

/**
 * SubmitJob, retried by the client across leader changes. A retry after a lost response meets the
 * job it already submitted (the id is ours, 128 random bits): that is a success, not an error.
 */
async function submitOnce(client: ClusterClient, graph: JobGraph, code: Uint8Array): Promise<string> {
  try {
    return await client.submitJob({ job_graph: graph, module_bundle: Buffer.from(code) });
  } catch (raw) {
    const err = fromServiceError(raw);
    const jobId = graph.job_id ?? '';
    if (err.code === ErrorCode.JOB_INVALID) {
      const known = await client.getJobStatus(jobId).then(
        () => true,
        () => false,
      );
      if (known) return jobId;
    }
    throw err;
  }
}

export async function submit(opts: SubmitOptions, io: CliIo): Promise<number> {
  // A bad --output-format fails before the job is built or submitted.
  if (opts.outputFormat !== undefined) outputFormatFor(opts.outputFormat, io.stdout);
  // --json prints JSON Lines (the job id, the final status, the rows): another format's rows
  // would make stdout two documents, or none.
  if (opts.json && opts.outputFormat !== undefined && opts.outputFormat !== 'jsonl')
    throw new UsageError(
      `--output-format ${opts.outputFormat} with --json: --json prints JSON Lines, rows included; drop --json, or --output-format`,
      false,
    );
  const plan = await buildJobPlan(opts, io);
  const bundle = plan.bundle;
  const graph: JobGraph = {
    ...plan.graph,
    job_id: newJobId(),
    job_args: [...opts.jobArgs],
    config: plan.config,
    module_digest: bundle.digest,
    submitted_at_ms: Date.now(),
  };
  const built = { name: plan.name };
  const collects = !opts.detached && (plan.graph.vertices ?? []).some((v) => v.sink?.collect === true);
  const format: OutputFormat | undefined = collects
    ? outputFormatFor(opts.outputFormat ?? (opts.json ? 'jsonl' : undefined), io.stdout)
    : undefined;
  // Rows other than a table keep stdout to themselves (`> out.csv`): the rest goes to stderr. With
  // --json, the {"jobId"} line stays stdout's first line and the rows follow it.
  const info = format !== undefined && format !== 'table' && !opts.json ? io.stderr : io.stdout;

  const sink = await progressSinkFor(info, io.stderr, {
    json: false,
    quiet: opts.json || opts.detached,
    color: io.env.NO_COLOR === undefined,
  });
  return withClient(opts, io, async (client) => {
    const jobId = await submitOnce(client, graph, bundle.code);
    if (opts.json) printJson(info, { jobId });
    else printLines(info, [`submitted job ${built.name} as ${jobId}`]);
    if (opts.detached) return 0;
    const code = await followAndReport(
      client,
      jobId,
      sink,
      { ...opts, json: opts.json },
      { ...io, stdout: info },
      true,
    );
    if (format !== undefined) await printJobResult(client, jobId, format, io.stdout, fetchOptions(client));
    return code;
  });
}

function fetchOptions(client: ClusterClient): { streamTimeoutMs: number } {
  return { streamTimeoutMs: clientConfiguration(client.target).getDurationMs('collect-sink.fetch.timeout') };
}

/** `rebound results <job>`: a finished job's collect() result, again, from whichever JobMaster leads. */
export async function results(opts: ResultsOptions, io: CliIo): Promise<number> {
  const format = outputFormatFor(opts.outputFormat, io.stdout);
  return withClient(opts, io, async (client) => {
    const jobId = await resolveJobId(client, opts.jobId);
    await printJobResult(client, jobId, format, io.stdout, fetchOptions(client));
    return 0;
  });
}

export async function list(opts: ListOptions, io: CliIo): Promise<number> {
  const all = await withClient(opts, io, (client) => client.listJobs());
  const jobs = opts.running ? all.filter((j) => !isTerminalJobState(j.state)) : all;
  if (opts.json) printJson(io.stdout, jobSummariesToJson(jobs));
  else printLines(io.stdout, renderJobList(jobs));
  return 0;
}

export async function status(opts: StatusOptions, io: CliIo): Promise<number> {
  const { st, reruns } = await withClient(opts, io, async (client) => {
    const got = await client.getJobStatus(await resolveJobId(client, opts.jobId));
    return {
      st: got,
      reruns: opts.json || got.recoveries.length === 0 ? undefined : await localReruns(client.target, got.job_id),
    };
  });
  if (opts.json) printJson(io.stdout, jobStatusToJson(st));
  else
    printLines(io.stdout, fitSentences(renderJobStatus(st, { nowMs: Date.now(), ...(reruns ? { reruns } : {}) }), io));
  return 0;
}

/** On a terminal, the failover sentences wrap at its width (tables stay as they are). */
export function fitSentences(lines: readonly string[], io: CliIo): string[] {
  const width = io.stdout.isTTY ? (io.stdout.columns ?? 80) : 0;
  if (width <= 0) return [...lines];
  return lines.flatMap((l) => {
    const m = /^(\s*)(Failover \d+|ran again: )/.exec(l);
    return m && l.length > width
      ? wrapToWidth(l.trimStart(), width - m[1]!.length, '  ').map((w) => `${m[1]}${w}`)
      : [l];
  });
}

export async function cancel(opts: CancelOptions, io: CliIo): Promise<number> {
  const { jobId, state } = await withClient(opts, io, async (client) => {
    const id = await resolveJobId(client, opts.jobId);
    return { jobId: id, state: await client.cancelJob(id) };
  });
  if (opts.json) printJson(io.stdout, { jobId, state });
  else printLines(io.stdout, [`job ${jobId}: ${state}`]);
  return 0;
}

export async function watch(opts: WatchOptions, io: CliIo): Promise<number> {
  const sink = await progressSinkFor(io.stdout, io.stderr, { json: opts.json, color: io.env.NO_COLOR === undefined });
  return withClient(opts, io, async (client) =>
    followAndReport(client, await resolveJobId(client, opts.jobId), sink, opts, io, true),
  );
}
