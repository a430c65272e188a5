/**
 * JobEventStore benchmark: appends/s (buffered, fsync per flush) and replayed events/s for
 * 100,000 events of the real event types, with the default settings (1 mb write buffer, 1 s
 * flush interval, durability fsync). Prints a table and writes bench/results/event-store.json.
 *
 *   npx tsx bench/event-store/run.ts [--events N] [--runs N] [--subpartitions N]
 *
 * Appends/s is measured end to end: from the first writeEvent to the moment stop() returns,
 * i.e. every event is on disk and fsynced. The writer yields to the event loop every 1,000
 * events, as a JobMaster does between RPCs, so the background flushes overlap the appends.
 * Replay reads the files back through a new JobMaster attempt's JobEventManager, decoding
 * every event fully, in this (warm) process with a no-op handler; and once per run in a fresh
 * process (replay-fresh.ts) with a handler that keeps state, as a new leader replays after a
 * failover: the figure a recovery actually gets. Targets (issue 24, for 16 subpartitions): 1M
 * durable appends/s, 2M replayed events/s warm, and 100,000 events/s in the fresh process (a job
 * of 100,000 events replayed in under a second). They are judged only under the load rule of
 * bench/load.ts (other processes took at most a quarter of a core during the whole run); the JSON
 * records the load and `judged`, and a verdict of null means not judged.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FileSystemJobEventStore, JobEventManager, type JobEvent } from '@rebound/event-store';
import { SAMPLE_JOB_ID, sampleJobEvents } from '@rebound/event-store/testing';
import { LoadSampler, judge, verdictText } from '../load.js';

const FRESH = join(dirname(fileURLToPath(import.meta.url)), 'replay-fresh.ts');

/** Replays `haDir` in a new process; events/s of its replay (and of the whole process, start-up included). */
function replayInFreshProcess(
  haDir: string,
  events: number,
): Promise<{ replayPerSec: number; replayMs: number; processMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    execFile(
      process.execPath,
      ['--import', 'tsx', FRESH, '--ha-dir', haDir, '--job-id', SAMPLE_JOB_ID, '--events', String(events)],
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`fresh replay failed: ${stderr || err.message}`));
        const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { replayMs: number };
        resolve({
          replayPerSec: events / (r.replayMs / 1000),
          replayMs: r.replayMs,
          processMs: performance.now() - t0,
        });
      },
    );
  });
}

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '5' },
    subpartitions: { type: 'string', default: '' },
    dir: { type: 'string', default: '' },
  },
});
const EVENTS = Number(values.events);
/** The command that reproduces this run, recorded with its figures. */
const COMMAND = ['npx tsx bench/event-store/run.ts', ...process.argv.slice(2)].join(' ');
const RUNS = Number(values.runs);
/** Subpartitions per finished event: 16 (a fixed-parallelism consumer) and 128 (the default max-parallelism, for adaptive consumers). */
const SUBPARTITIONS = values.subpartitions ? [Number(values.subpartitions)] : [16, 128];
const YIELD_EVERY = 1000;

interface RunResult {
  appendsPerSec: number;
  /** Appends per second of this process's CPU time (user + system): robust to other load on the machine. */
  appendsPerCpuSec: number;
  replayPerCpuSec: number;
  enqueuePerSec: number;
  replayPerSec: number;
  fsyncs: number;
  flushes: number;
  files: number;
  bytes: number;
  appendMs: number;
  replayMs: number;
  /** The same log replayed in a new process with a stateful handler (replay-fresh.ts). */
  freshReplayPerSec: number;
  freshReplayMs: number;
  /** Spawn to exit of that process: module loading included. */
  freshProcessMs: number;
}

async function once(events: JobEvent[], baseDir: string): Promise<RunResult> {
  const haDir = await mkdtemp(join(baseDir, 'rebound-bench-events-'));
  try {
    const writer = new FileSystemJobEventStore({ haDir, jobId: SAMPLE_JOB_ID, epoch: 1, currentLeaderEpoch: () => 1 });
    await writer.start();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < events.length; i++) {
      writer.writeEvent(events[i]!);
      if (i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise<void>((r) => setImmediate(r));
    }
    const tEnqueued = performance.now();
    await writer.stop(false);
    const tDurable = performance.now();
    const cpuWrite = process.cpuUsage(cpu0);
    const stats = writer.stats();
    if (writer.status().state !== 'stopped' || stats.eventsDropped > 0)
      throw new Error(`writer failed: ${JSON.stringify(writer.status())}`);

    const reader = new FileSystemJobEventStore({ haDir, jobId: SAMPLE_JOB_ID, epoch: 2, currentLeaderEpoch: () => 2 });
    const manager = new JobEventManager(reader);
    await manager.start();
    let seen = 0;
    const cpu1 = process.cpuUsage();
    const t1 = performance.now();
    const result = await manager.replay(() => {
      seen++;
    });
    const t2 = performance.now();
    const cpuReplay = process.cpuUsage(cpu1);
    await manager.stop(false);
    if (!result.ok || seen !== events.length) throw new Error(`replay failed: ${JSON.stringify(result)}`);
    const fresh = await replayInFreshProcess(haDir, events.length);
    return {
      appendsPerSec: events.length / ((tDurable - t0) / 1000),
      enqueuePerSec: events.length / ((tEnqueued - t0) / 1000),
      appendsPerCpuSec: events.length / ((cpuWrite.user + cpuWrite.system) / 1e6),
      replayPerCpuSec: events.length / ((cpuReplay.user + cpuReplay.system) / 1e6),
      replayPerSec: events.length / ((t2 - t1) / 1000),
      fsyncs: stats.fsyncs,
      flushes: stats.flushes,
      files: stats.filesCreated,
      bytes: stats.bytesWritten,
      appendMs: tDurable - t0,
      replayMs: t2 - t1,
      freshReplayPerSec: fresh.replayPerSec,
      freshReplayMs: fresh.replayMs,
      freshProcessMs: fresh.processMs,
    };
  } finally {
    await rm(haDir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const baseDir = values.dir || tmpdir();
const loadBefore = loadavg();
const sampler = new LoadSampler(2_000);
const scenarios = [];
for (const subpartitions of SUBPARTITIONS) {
  const events = sampleJobEvents(EVENTS, 64, subpartitions);
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  await once(events.slice(0, 5000), baseDir); // warm-up (JIT)
  const runs: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await once(events, baseDir));
  scenarios.push({
    subpartitions,
    events: EVENTS,
    eventsPerType: counts,
    bytesPerEvent: Math.round(runs[0]!.bytes / EVENTS),
    medianAppendsPerSec: Math.round(median(runs.map((r) => r.appendsPerSec))),
    medianEnqueuePerSec: Math.round(median(runs.map((r) => r.enqueuePerSec))),
    medianReplayPerSec: Math.round(median(runs.map((r) => r.replayPerSec))),
    medianAppendsPerCpuSec: Math.round(median(runs.map((r) => r.appendsPerCpuSec))),
    medianReplayPerCpuSec: Math.round(median(runs.map((r) => r.replayPerCpuSec))),
    medianFreshReplayPerSec: Math.round(median(runs.map((r) => r.freshReplayPerSec))),
    medianFreshProcessMs: Math.round(median(runs.map((r) => r.freshProcessMs))),
    runs: runs.map((r) => ({
      ...r,
      appendsPerSec: Math.round(r.appendsPerSec),
      enqueuePerSec: Math.round(r.enqueuePerSec),
      replayPerSec: Math.round(r.replayPerSec),
      appendsPerCpuSec: Math.round(r.appendsPerCpuSec),
      replayPerCpuSec: Math.round(r.replayPerCpuSec),
      appendMs: Math.round(r.appendMs),
      replayMs: Math.round(r.replayMs),
      freshReplayPerSec: Math.round(r.freshReplayPerSec),
      freshReplayMs: Math.round(r.freshReplayMs),
      freshProcessMs: Math.round(r.freshProcessMs),
    })),
  });
}

// Issue 24: at least 1M durable appends/s and 2M replayed events/s (warm), and a job of 100,000
// events replayed in under a second by a new leader (the fresh process).
const TARGET_APPENDS = 1_000_000;
const TARGET_REPLAY = 2_000_000;
const TARGET_FRESH_REPLAY = 100_000;
const rows = scenarios.flatMap((s) =>
  s.runs.map((r, i) => ({
    subpartitions: s.subpartitions,
    run: i + 1,
    'bytes/event': s.bytesPerEvent,
    'appends/s (durable)': r.appendsPerSec,
    'enqueue/s': r.enqueuePerSec,
    fsyncs: r.fsyncs,
    flushes: r.flushes,
    'file MB': +(r.bytes / 1024 / 1024).toFixed(1),
    'replay events/s': r.replayPerSec,
    'appends/cpu-s': r.appendsPerCpuSec,
    'replay/cpu-s': r.replayPerCpuSec,
    'fresh replay/s': r.freshReplayPerSec,
    'fresh process ms': r.freshProcessMs,
  })),
);
const loadAfter = loadavg();
const load = sampler.stop();
console.log(
  `JobEventStore: ${EVENTS} events, 1 mb buffer, 1 s interval, durability fsync; ${cpus().length} CPUs, Node ${process.version}, dir ${baseDir}; ` +
    `load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after; other processes took ${load.foreignCores ?? '?'} cores ` +
    `(targets judged at most ${load.maxForeignCores}): ${load.judged ? 'judged' : 'NOT JUDGED'}`,
);
console.table(rows);
const verdicts = scenarios.map((s) => ({
  subpartitions: s.subpartitions,
  appends: judge(s.medianAppendsPerSec >= TARGET_APPENDS, load),
  warmReplay: judge(s.medianReplayPerSec >= TARGET_REPLAY, load),
  // What a recovery gets: cold code, a handler that keeps state.
  freshReplay: judge(s.medianFreshReplayPerSec >= TARGET_FRESH_REPLAY, load),
}));
for (const [i, s] of scenarios.entries()) {
  const v = verdicts[i]!;
  console.log(
    `${s.subpartitions} subpartitions/event: median ${s.medianAppendsPerSec} appends/s (target ${TARGET_APPENDS}: ${verdictText(v.appends, load)}), ` +
      `median ${s.medianReplayPerSec} replayed events/s warm (target ${TARGET_REPLAY}: ${verdictText(v.warmReplay, load)}), ` +
      `${s.medianFreshReplayPerSec} in a fresh process with a stateful handler (target ${TARGET_FRESH_REPLAY}: ${verdictText(v.freshReplay, load)}), ` +
      `${s.runs[0]!.fsyncs} fsyncs; per CPU-second: ${s.medianAppendsPerCpuSec} appends, ${s.medianReplayPerCpuSec} replayed events`,
  );
}

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'event-store.json');
await mkdir(dirname(out), { recursive: true });
await writeFile(
  out,
  `${JSON.stringify(
    {
      benchmark: 'event-store',
      command: COMMAND,
      at: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      directory: baseDir,
      loadAverage: { before: loadBefore, after: loadAfter },
      // The load rule of bench/load.ts: CPU of other processes during the whole measurement.
      load,
      judged: load.judged,
      // null: not judged (other processes took more CPU than the load rule allows).
      targetsMet: verdicts,
      settings: { writeBufferSize: '1 mb', flushInterval: '1 s', durability: 'fsync', yieldEvery: YIELD_EVERY },
      targets: {
        appendsPerSec: TARGET_APPENDS,
        replayEventsPerSec: TARGET_REPLAY,
        freshReplayEventsPerSec: TARGET_FRESH_REPLAY,
      },
      scenarios,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
