import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '@rebound/core';
import { ChaosUsageError } from './errors.js';
import {
  CRASH_EVENT_TYPES,
  FAULT_KINDS,
  HA_BACKENDS,
  describeCrashPoint,
  faultUnavailable,
  isFaultKind,
  type CrashEventType,
  type CrashPointSpec,
  type FaultKind,
  type HaBackend,
} from './faults.js';
import { DRAWN_JOB_NAMES, JOB_NAMES, isJobName, type JobName } from './jobs.js';

const JOBS_TEXT = `${DRAWN_JOB_NAMES.join(', ')} (drawn per run without --job), ${JOB_NAMES.filter(
  (j) => !(DRAWN_JOB_NAMES as readonly string[]).includes(j),
).join(', ')} (only when named)`;

export const USAGE = `usage: npm run chaos -- --seed S [--runs N] [--faults LIST] [--job wordcount|aggregation|join|unique-ids] [--json FILE]
           [--md FILE] [--faults-per-run N] [--crash-point SPEC] [--slowdown N] [--deadline DURATION] [--time-budget DURATION]
           [--ha file|etcd] [--partitions] [--keep-running-tasks on|off] [--shuffle-workers N] [--shuffle-replicas 1|2]
           [--work-root DIR] [--keep] [--quiet]
  jobs: ${JOBS_TEXT}
  faults: ${FAULT_KINDS.join(', ')}
  crash points: before-event=<EventType>:<N> | after-event=<EventType>:<N> | after-deploy=<N>`;

export interface ChaosOptions {
  /** Seed of run 0; run i uses seed + i. */
  readonly seed: number;
  readonly runs: number;
  /** Fault kinds runs draw from (undefined: all). */
  readonly faults?: readonly FaultKind[];
  readonly job?: JobName;
  readonly json?: string;
  readonly md?: string;
  readonly faultsPerRun?: number;
  readonly crashPoint?: CrashPointSpec;
  /** Multiplier of the jobs' per-record delays (default 1). */
  readonly slowdown?: number;
  /** HA backend of every run (default file); etcd: each run starts a 3-member etcd of its own. */
  readonly ha: HaBackend;
  /** Network partition faults allowed (explicit: the same seed must give the same plan everywhere). */
  readonly partitions: boolean;
  /** execution.batch.job-recovery.keep-running-tasks of every run (default: drawn per run from its seed). */
  readonly keepRunningTasks?: boolean;
  /** Shuffle workers of every run: 0 (default) is TaskManager shuffle, 1 to 3 is `shuffle.type: remote`. */
  readonly shuffleWorkers: number;
  /** shuffle.remote.replicas of every remote-shuffle run (default: drawn per run, 1 or 2, at most the workers). */
  readonly shuffleReplicas?: number;
  /** Per run: the job must be FINISHED this long after submission. */
  readonly deadlineMs: number;
  /** No new run starts after this much wall time (the runs so far are reported). */
  readonly timeBudgetMs?: number;
  readonly workRoot: string;
  readonly keep: boolean;
  readonly quiet: boolean;
  readonly help: boolean;
}

export const DEFAULT_DEADLINE_MS = 240_000;

/** Vertices of each chaos job (join: two sources and the join; unique-ids: one chain). */
const MAX_JOB_VERTICES: Readonly<Record<JobName, number>> = { wordcount: 2, aggregation: 2, join: 3, 'unique-ids': 1 };

function usage(message: string): ChaosUsageError {
  return new ChaosUsageError(message);
}

function integer(value: string, flag: string, min: number): number {
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
    throw usage(`${flag} must be an integer >= ${min}, got '${value}'`);
  }
  return Number(value);
}

function duration(value: string, flag: string): number {
  try {
    return parseDuration(value, flag);
  } catch {
    throw usage(`${flag}: '${value}' is not a duration; use e.g. '90 s' or '25 min'`);
  }
}

/** Parses `--crash-point` and rejects crash points that can never trigger in a chaos run. */
export function parseCrashPoint(text: string, job: JobName | undefined): CrashPointSpec {
  const spec = text.trim();
  const shapes = 'before-event=<EventType>:<N>, after-event=<EventType>:<N> or after-deploy=<N>';
  if (spec === 'during-reconciling') {
    throw usage(
      `--crash-point during-reconciling can never trigger: the first leader never reconciles (the double-failure fault crashes the second leader there)`,
    );
  }
  const deploy = /^after-deploy=(.*)$/.exec(spec);
  if (deploy) {
    const n = deploy[1]!.trim();
    if (!/^\d+$/.test(n)) throw usage(`--crash-point ${spec}: N must be an integer, got '${n}'`);
    if (Number(n) < 1) throw usage(`--crash-point ${spec} can never trigger: deploys are counted from 1`);
    return { kind: 'after-deploy', n: Number(n) };
  }
  const m = /^(before-event|after-event)=([^:]*):(.*)$/.exec(spec);
  if (!m) throw usage(`--crash-point '${spec}' is not ${shapes}`);
  const kind = m[1] as 'before-event' | 'after-event';
  const type = m[2]!.trim();
  const nText = m[3]!.trim();
  if (!(CRASH_EVENT_TYPES as readonly string[]).includes(type)) {
    throw usage(
      `--crash-point ${spec} can never trigger: there is no event type '${type}' (the JobMaster writes ${CRASH_EVENT_TYPES.join(', ')})`,
    );
  }
  if (!/^\d+$/.test(nText)) throw usage(`--crash-point ${spec}: N must be an integer, got '${nText}'`);
  const n = Number(nText);
  if (n < 1) throw usage(`--crash-point ${spec} can never trigger: events are counted from 1`);
  const eventType = type as CrashEventType;
  if (eventType === 'ExecutionVertexReset') {
    throw usage(
      `--crash-point ${spec} can never trigger: a crash-point run has no other fault, and a JobMaster without failures writes no ExecutionVertexReset`,
    );
  }
  const maxVertices = job ? MAX_JOB_VERTICES[job] : Math.max(...Object.values(MAX_JOB_VERTICES));
  if (eventType === 'ExecutionJobVertexInitialized' && n > maxVertices) {
    throw usage(
      `--crash-point ${spec} can never trigger: ${job ? `the ${job} job has` : 'the chaos jobs have at most'} ${maxVertices} ${maxVertices === 1 ? 'vertex' : 'vertices'}, one ExecutionJobVertexInitialized each`,
    );
  }
  return { kind, eventType, n };
}

/** Parses the command line; every mistake is a ChaosUsageError with one clear line. */
export function parseChaosArgs(argv: readonly string[], now = Date.now()): ChaosOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        seed: { type: 'string' },
        runs: { type: 'string' },
        faults: { type: 'string' },
        job: { type: 'string' },
        json: { type: 'string' },
        md: { type: 'string' },
        'faults-per-run': { type: 'string' },
        'crash-point': { type: 'string' },
        slowdown: { type: 'string' },
        deadline: { type: 'string' },
        'time-budget': { type: 'string' },
        'work-root': { type: 'string' },
        ha: { type: 'string' },
        partitions: { type: 'boolean' },
        'keep-running-tasks': { type: 'string' },
        'shuffle-workers': { type: 'string' },
        'shuffle-replicas': { type: 'string' },
        keep: { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw usage(`${(err as Error).message.split('\n')[0]}`);
  }
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const seedText = str('seed');
  let seed: number;
  if (seedText === undefined) {
    seed = now % 1_000_000_000;
  } else {
    if (!/^\s*\d+\s*$/.test(seedText) || !Number.isSafeInteger(Number(seedText))) {
      throw usage(`--seed must be a non-negative integer, got '${seedText}'`);
    }
    seed = Number(seedText);
  }
  const runs = str('runs') === undefined ? 1 : integer(str('runs')!, '--runs', 1);
  const jobText = str('job');
  if (jobText !== undefined && !isJobName(jobText)) throw usage(`unknown job '${jobText}'; jobs: ${JOBS_TEXT}`);
  const job = jobText as JobName | undefined;
  let faults: FaultKind[] | undefined;
  const faultsText = str('faults');
  if (faultsText !== undefined) {
    const names = faultsText
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (names.length === 0) throw usage(`--faults is empty; known faults: ${FAULT_KINDS.join(', ')}`);
    const unknown = names.filter((n) => !isFaultKind(n));
    if (unknown.length > 0) {
      throw usage(
        `unknown fault${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `'${u}'`).join(', ')}; known faults: ${FAULT_KINDS.join(', ')}`,
      );
    }
    faults = [...new Set(names as FaultKind[])];
  }
  const haText = str('ha') ?? 'file';
  if (!(HA_BACKENDS as readonly string[]).includes(haText))
    throw usage(`--ha must be one of ${HA_BACKENDS.join(', ')}, got '${haText}'`);
  const ha = haText as HaBackend;
  const partitions = values.partitions === true;
  const swText = str('shuffle-workers');
  const shuffleWorkers = swText === undefined ? 0 : integer(swText, '--shuffle-workers', 0);
  if (shuffleWorkers > 3) throw usage(`--shuffle-workers must be at most 3, got ${shuffleWorkers}`);
  const replicasText = str('shuffle-replicas');
  const shuffleReplicas = replicasText === undefined ? undefined : integer(replicasText, '--shuffle-replicas', 1);
  if (shuffleReplicas !== undefined) {
    if (shuffleWorkers === 0) throw usage('--shuffle-replicas needs --shuffle-workers N (remote shuffle)');
    if (shuffleReplicas > Math.min(2, shuffleWorkers))
      throw usage(
        `--shuffle-replicas ${shuffleReplicas} needs at least ${shuffleReplicas} shuffle workers and is at most 2; --shuffle-workers is ${shuffleWorkers}`,
      );
  }
  for (const k of faults ?? []) {
    const why = faultUnavailable(k, { ha, partitions, shuffleWorkers });
    if (why) throw usage(why);
  }
  const cpText = str('crash-point');
  const crashPoint = cpText === undefined ? undefined : parseCrashPoint(cpText, job);
  if (crashPoint) {
    if (faults && !faults.includes('crash-point'))
      throw usage(`--crash-point ${describeCrashPoint(crashPoint)} needs the crash-point fault in --faults`);
    faults ??= ['crash-point'];
  }
  const fprText = str('faults-per-run');
  const faultsPerRun = fprText === undefined ? undefined : integer(fprText, '--faults-per-run', 1);
  if (faultsPerRun !== undefined && faultsPerRun > 3)
    throw usage(`--faults-per-run must be at most 3, got ${faultsPerRun}`);
  const slowdownText = str('slowdown');
  const slowdown = slowdownText === undefined ? undefined : integer(slowdownText, '--slowdown', 1);
  if (slowdown !== undefined && slowdown > 20) throw usage(`--slowdown must be at most 20, got ${slowdown}`);
  const krText = str('keep-running-tasks');
  if (krText !== undefined && krText !== 'on' && krText !== 'off')
    throw usage(`--keep-running-tasks must be on or off, got '${krText}'`);
  return {
    seed,
    runs,
    ...(faults ? { faults } : {}),
    ...(job ? { job } : {}),
    ...(str('json') ? { json: str('json')! } : {}),
    ...(str('md') ? { md: str('md')! } : {}),
    ...(faultsPerRun !== undefined ? { faultsPerRun } : {}),
    ...(crashPoint ? { crashPoint } : {}),
    ...(slowdown !== undefined && slowdown !== 1 ? { slowdown } : {}),
    ha,
    partitions,
    ...(krText !== undefined ? { keepRunningTasks: krText === 'on' } : {}),
    shuffleWorkers,
    ...(shuffleReplicas !== undefined ? { shuffleReplicas } : {}),
    deadlineMs: str('deadline') === undefined ? DEFAULT_DEADLINE_MS : duration(str('deadline')!, '--deadline'),
    ...(str('time-budget') !== undefined ? { timeBudgetMs: duration(str('time-budget')!, '--time-budget') } : {}),
    workRoot: str('work-root') ?? join(tmpdir(), 'rebound-chaos'),
    keep: values.keep === true,
    quiet: values.quiet === true,
    help: values.help === true,
  };
}

/** The command that replays exactly the run with `seed` (same pool, job and crash point). */
export function replayCommand(opts: ChaosOptions, seed: number): string {
  const parts = ['npm run chaos --', '--seed', String(seed), '--runs', '1'];
  if (opts.faults) parts.push('--faults', opts.faults.join(','));
  if (opts.job) parts.push('--job', opts.job);
  if (opts.faultsPerRun !== undefined) parts.push('--faults-per-run', String(opts.faultsPerRun));
  if (opts.crashPoint) parts.push('--crash-point', describeCrashPoint(opts.crashPoint));
  if (opts.slowdown !== undefined) parts.push('--slowdown', String(opts.slowdown));
  if (opts.ha !== 'file') parts.push('--ha', opts.ha);
  if (opts.partitions) parts.push('--partitions');
  if (opts.keepRunningTasks !== undefined) parts.push('--keep-running-tasks', opts.keepRunningTasks ? 'on' : 'off');
  if (opts.shuffleWorkers > 0) parts.push('--shuffle-workers', String(opts.shuffleWorkers));
  if (opts.shuffleReplicas !== undefined) parts.push('--shuffle-replicas', String(opts.shuffleReplicas));
  return parts.join(' ');
}

/** The command line of a whole invocation, as recorded in the results. */
export function commandLine(argv: readonly string[]): string {
  return [
    'npm run chaos --',
    ...argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)),
  ].join(' ');
}
