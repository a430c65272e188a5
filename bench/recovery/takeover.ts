/**
 * Takeover benchmark of the HA backends (issue 14): how long after a leader's SIGKILL a standby
 * leads and serves, with `high-availability.type=file` and with `etcd`, the same lease settings,
 * side by side.
 *
 *   npx tsx bench/recovery/takeover.ts [--repeat 5] [--lease 10 s] [--renew 2 s] [--poll 1 s]
 *       [--max-load 2] [--load-wait 5 min] [--results bench/results/recovery-etcd.json]
 *
 * One local cluster per backend (2 JobMasters, 1 TaskManager; etcd: one member started here on
 * loopback ports). Each repetition SIGKILLs the leader and measures, from just before the signal:
 *   - elected: until the HA services record a leader of a newer epoch (the benchmark polls the
 *     record every 10 ms; it measures, the cluster itself never polls etcd);
 *   - serving: until that leader's Dispatcher answers the health check as SERVING.
 * Then a new standby is started for the next repetition. The backends alternate within each
 * repetition, so a change of machine load hits both. Before each kill the run waits (up to
 * --load-wait) for the 1-minute load to drop below --max-load; every sample is recorded and the
 * target (etcd's mean serving time at most 20 % above the file lock's) is judged only when the
 * load stayed at or below the number of cores (bench/load.ts).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Configuration, HealthServices, checkHealth, parseDuration } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices } from '@rebound/ha';
import { startEtcdCluster, type EtcdCluster } from '@rebound/ha/testing';
import { BenchCluster, ROOT } from './cluster.js';
import { LoadSampler, judge, verdictText } from '../load.js';

interface Options {
  repeat: number;
  lease: string;
  renew: string;
  poll: string;
  maxLoad: number;
  loadWaitMs: number;
  results: string;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      repeat: { type: 'string', default: '5' },
      lease: { type: 'string', default: '10 s' },
      renew: { type: 'string', default: '2 s' },
      poll: { type: 'string', default: '1 s' },
      'max-load': { type: 'string', default: '2' },
      'load-wait': { type: 'string', default: '5 min' },
      results: { type: 'string', default: join(ROOT, 'bench/results/recovery-etcd.json') },
    },
  });
  return {
    repeat: Number(values.repeat),
    lease: values.lease!,
    renew: values.renew!,
    poll: values.poll!,
    maxLoad: Number(values['max-load']),
    loadWaitMs: parseDuration(values['load-wait']!, 'load-wait'),
    results: resolve(values.results!),
  };
}

const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

async function waitForQuietMachine(max: number, maxWaitMs: number): Promise<number> {
  const t0 = Date.now();
  while (load1() >= max && Date.now() - t0 < maxWaitMs) await new Promise((r) => setTimeout(r, 2_000));
  return load1();
}

type Backend = 'file' | 'etcd';

interface Sample {
  readonly backend: Backend;
  readonly run: number;
  readonly electedMs: number;
  readonly servingMs: number;
  readonly loadBefore: number;
  readonly loadAfter: number;
}

async function until<T>(what: string, timeoutMs: number, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

class BackendUnderTest {
  private constructor(
    readonly backend: Backend,
    readonly cluster: BenchCluster,
    readonly ha: HighAvailabilityServices,
  ) {}

  static async start(backend: Backend, workdir: string, config: Record<string, string>): Promise<BackendUnderTest> {
    const cluster = await BenchCluster.start(workdir, { jobmasters: 2, taskmanagers: 1, slots: 1, config });
    const ha = createHaServices(
      Configuration.of({
        ...config,
        ...(backend === 'etcd' ? { 'high-availability.cluster-id': (await readClusterId(workdir)) ?? 'default' } : {}),
      }),
      cluster.haDir,
    );
    return new BackendUnderTest(backend, cluster, ha);
  }

  async killAndMeasure(run: number, timeoutMs: number): Promise<Sample> {
    const loadBefore = load1();
    const killed = await this.cluster.killLeader();
    const t0 = killed.killedAtMs;
    const next = await until('a newer leader', timeoutMs, async () => {
      const l = await this.ha.getLeader();
      return l && l.epoch > killed.epoch ? l : undefined;
    });
    const electedMs = Date.now() - t0;
    await until('the new leader serving', timeoutMs, async () =>
      (await checkHealth(next.address, HealthServices.dispatcher, 1_000)) === 'SERVING' ? true : undefined,
    );
    const servingMs = Date.now() - t0;
    // A standby for the next repetition.
    await this.cluster.startJobMaster();
    return { backend: this.backend, run, electedMs, servingMs, loadBefore, loadAfter: load1() };
  }

  async stop(): Promise<void> {
    await this.ha.close();
    await this.cluster.stop();
  }
}

/** The cluster id `local up` chose (cluster.json), so the benchmark reads the same keys. */
async function readClusterId(workdir: string): Promise<string | undefined> {
  const { readClusterFile } = await import('@rebound/cli');
  return (await readClusterFile(workdir)).config['high-availability.cluster-id'];
}

const mean = (xs: readonly number[]): number => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor((s.length - 1) / 2)]!;
};

async function main(): Promise<void> {
  const o = options();
  const base = await mkdtemp(join(tmpdir(), 'rebound-bench-takeover-'));
  const lease = {
    'high-availability.lease.timeout': o.lease,
    'high-availability.lease.renew-interval': o.renew,
    'high-availability.lease.poll-interval': o.poll,
  };
  const common = { 'heartbeat.interval': '200 ms', 'heartbeat.timeout': '2 s', 'rpc.timeout': '3 s', ...lease };
  const sampler = new LoadSampler();
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  let etcd: EtcdCluster | undefined;
  const backends: BackendUnderTest[] = [];
  const samples: Sample[] = [];
  try {
    etcd = await startEtcdCluster({ members: 1, baseDir: join(base, 'etcd') }).catch(async (err: unknown) => {
      await mkdir(join(base, 'etcd'), { recursive: true });
      throw err;
    });
    backends.push(await BackendUnderTest.start('file', join(base, 'file'), { ...common }));
    backends.push(
      await BackendUnderTest.start('etcd', join(base, 'etcd-cluster'), {
        ...common,
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
      }),
    );
    const timeoutMs = 4 * parseDuration(o.lease, 'lease') + 30_000;
    for (let run = 0; run < o.repeat; run++) {
      // Alternate which backend goes first, so neither always runs right after a standby start.
      const order = run % 2 === 0 ? backends : [...backends].reverse();
      for (const b of order) {
        const quiet = await waitForQuietMachine(o.maxLoad, o.loadWaitMs);
        // Let the standby started last time settle (its first election attempt, its watch).
        await new Promise((r) => setTimeout(r, 1_500));
        const s = await b.killAndMeasure(run, timeoutMs);
        samples.push(s);
        console.log(
          `run ${run + 1} ${b.backend.padEnd(4)}: elected ${s.electedMs} ms, serving ${s.servingMs} ms (load ${quiet} -> ${s.loadAfter})`,
        );
      }
    }
  } finally {
    for (const b of backends) await b.stop().catch(() => undefined);
    await etcd?.stopAll().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  }
  const load = sampler.stop();
  const of = (b: Backend, k: 'electedMs' | 'servingMs'): number[] =>
    samples.filter((s) => s.backend === b).map((s) => s[k]);
  const summary = {
    file: {
      electedMeanMs: mean(of('file', 'electedMs')),
      servingMeanMs: mean(of('file', 'servingMs')),
      servingMedianMs: median(of('file', 'servingMs')),
    },
    etcd: {
      electedMeanMs: mean(of('etcd', 'electedMs')),
      servingMeanMs: mean(of('etcd', 'servingMs')),
      servingMedianMs: median(of('etcd', 'servingMs')),
    },
  };
  const ratio =
    summary.file.servingMeanMs > 0
      ? Math.round((summary.etcd.servingMeanMs / summary.file.servingMeanMs) * 1000) / 1000
      : null;
  const met = ratio !== null && ratio <= 1.2;
  const verdict = judge(met, load);
  const doc = {
    benchmark: 'takeover after a leader SIGKILL: file lock vs etcd (issue 14)',
    at: new Date().toISOString(),
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? '', node: process.version },
    lease,
    repeat: o.repeat,
    loadAverage: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 100) / 100), whole: load },
    target: 'etcd mean time to a serving new leader at most 20 % above the file lock',
    etcdOverFile: ratio,
    targetMet: verdict,
    summary,
    samples,
  };
  await mkdir(dirname(o.results), { recursive: true });
  await writeFile(o.results, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(
    `\nfile: serving after ${summary.file.servingMeanMs} ms (mean), etcd: ${summary.etcd.servingMeanMs} ms; etcd/file ${ratio}: ${verdictText(verdict, load)}`,
  );
  console.log(`wrote ${o.results}`);
}

await main();
