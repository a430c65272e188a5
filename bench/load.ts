/**
 * The load the benchmarks run under, and the rule for judging targets. What disturbs a figure is
 * CPU taken by processes that are not part of the benchmark, so that is what the rule measures
 * where it can (Linux /proc): every process the benchmark starts inherits a tag in its environment
 * (`REBOUND_BENCH_RUN`), and the CPU the machine spent outside the tagged processes, plus steal,
 * is averaged over the measurement. A target is judged only when that foreign CPU stayed at or
 * below a quarter of a core. The 1-minute load average is still recorded; it was the rule before,
 * but a benchmark that keeps both cores of a 2-core machine busy lifts it to about 2 by itself.
 * Where /proc cannot be read, the load-average rule applies: at most one runnable process per
 * core for the whole measurement. Above the limit the verdict is `null` ("not judged") and the
 * figures are still recorded.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** The load-average rule: at most one runnable process per core on average. */
export function maxLoadForTargets(): number {
  return availableParallelism();
}

/** Foreign CPU a judged measurement may have had, in cores. */
export const MAX_FOREIGN_CORES = 0.25;

export interface LoadRecord {
  readonly cores: number;
  readonly maxLoadForTargets: number;
  readonly atStart: number;
  readonly atEnd: number;
  /** Highest 1-minute load average sampled during the measurement. */
  readonly max: number;
  readonly samples: number;
  /** Average CPU of processes outside the benchmark (and steal), in cores; undefined without /proc. */
  readonly foreignCores?: number;
  readonly maxForeignCores: number;
  /** Whether targets may be judged. */
  readonly judged: boolean;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const TAG_VAR = 'REBOUND_BENCH_RUN';
/** USER_HZ: /proc reports CPU time in these ticks (100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** Busy ticks of the whole machine: user, nice, system, irq, softirq and steal. */
function machineBusyTicks(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  return user + nice + system + irq + softirq + steal;
}

interface ProcessCpu {
  /** utime + stime + cutime + cstime: its own CPU and that of the children it reaped, in ticks. */
  readonly ticks: number;
  readonly ppid: string;
}

function processCpu(pid: string): ProcessCpu | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]), ppid: f[1]! };
  } catch {
    return undefined;
  }
}

/**
 * CPU of the tagged processes, followed by scanning /proc. A process's figure includes the
 * children it reaped (cutime, cstime): a CLI command that lives 80 ms between two scans is still
 * counted, through the benchmark that waited for it. A tracked process that is gone was reaped
 * by its parent; when that parent is tracked too, its children's time now carries it, so the
 * gone process's own count is taken back. What escapes both (a process reaped by an untracked
 * parent between scans) counts as foreign: the error can only make a measurement look more
 * disturbed than it was.
 */
class ForeignCpu {
  private readonly marker: string;
  private readonly seen = new Map<string, ProcessCpu>();
  private ownTicks = 0;
  private readonly busyAtStart: number;
  private readonly startedAt = performance.now();

  constructor() {
    const tag = process.env[TAG_VAR] ?? `${process.pid}-${Date.now()}`;
    process.env[TAG_VAR] = tag;
    this.marker = `${TAG_VAR}=${tag}\0`;
    this.busyAtStart = machineBusyTicks();
    // CPU this process spent before the measurement is not part of it.
    const self = processCpu(String(process.pid));
    if (self) this.seen.set(String(process.pid), self);
  }

  scan(): void {
    const alive = new Set<string>();
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const last = this.seen.get(pid);
      if (last === undefined) {
        let environ: string;
        try {
          environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
        } catch {
          continue;
        }
        if (!environ.includes(this.marker)) continue;
      }
      const now = processCpu(pid);
      if (now === undefined) continue;
      alive.add(pid);
      this.ownTicks += now.ticks - (last?.ticks ?? 0);
      this.seen.set(pid, now);
    }
    for (const [pid, last] of this.seen) {
      if (alive.has(pid)) continue;
      if (this.seen.has(last.ppid)) this.ownTicks -= last.ticks;
      this.seen.delete(pid);
    }
  }

  cores(): number {
    this.scan();
    const seconds = (performance.now() - this.startedAt) / 1000;
    if (seconds <= 0) return 0;
    return Math.max(0, (machineBusyTicks() - this.busyAtStart - this.ownTicks) / TICKS_PER_SECOND / seconds);
  }

  static tryStart(): ForeignCpu | undefined {
    try {
      return new ForeignCpu();
    } catch {
      return undefined;
    }
  }
}

/** Samples the 1-minute load average and the foreign CPU from now until stop(). */
export class LoadSampler {
  private readonly start = loadavg()[0]!;
  private max = this.start;
  private samples = 1;
  private readonly timer: NodeJS.Timeout;
  private readonly foreign = ForeignCpu.tryStart();
  private readonly scanTimer: NodeJS.Timeout | undefined;

  constructor(intervalMs = 5_000) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    if (this.foreign) {
      // Short-lived tagged processes (a CLI command) are caught by a scan once a second.
      this.scanTimer = setInterval(() => this.foreign?.scan(), 1_000);
      this.scanTimer.unref();
    }
  }

  private sample(): void {
    this.max = Math.max(this.max, loadavg()[0]!);
    this.samples++;
  }

  stop(): LoadRecord {
    clearInterval(this.timer);
    clearInterval(this.scanTimer);
    this.sample();
    const end = loadavg()[0]!;
    const foreignCores = this.foreign ? round2(this.foreign.cores()) : undefined;
    return {
      cores: availableParallelism(),
      maxLoadForTargets: maxLoadForTargets(),
      atStart: round2(this.start),
      atEnd: round2(end),
      max: round2(this.max),
      samples: this.samples,
      ...(foreignCores !== undefined ? { foreignCores } : {}),
      maxForeignCores: MAX_FOREIGN_CORES,
      judged: foreignCores !== undefined ? foreignCores <= MAX_FOREIGN_CORES : this.max <= maxLoadForTargets(),
    };
  }
}

/** A target's verdict under `load`: null when the load was too high to judge it. */
export function judge(met: boolean, load: Pick<LoadRecord, 'judged'>): boolean | null {
  return load.judged ? met : null;
}

export function verdictText(
  met: boolean | null,
  load: Pick<LoadRecord, 'max' | 'maxLoadForTargets'> & Partial<Pick<LoadRecord, 'foreignCores' | 'maxForeignCores'>>,
): string {
  if (met === null) {
    return load.foreignCores !== undefined
      ? `NOT JUDGED (other processes took ${load.foreignCores.toFixed(2)} cores > ${load.maxForeignCores ?? MAX_FOREIGN_CORES})`
      : `NOT JUDGED (load average up to ${load.max.toFixed(2)} > ${load.maxLoadForTargets})`;
  }
  return met ? 'met' : 'MISSED';
}
