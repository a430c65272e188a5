import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { deploymentsAfter, finishedInLog, finishedOf, killLeader, readEventLog, waitForLog } from './recovery-util.js';
import { makeTempDir, readSinkLines } from './util.js';

const JOB = 'test/fixtures/operator-kill.ts';

interface Order {
  o: number;
  c: number;
  v: number;
  name: string;
}
interface Customer {
  c: number;
  region: string;
}

type Op =
  | 'union'
  | 'mapPartition'
  | 'readJsonLines'
  | 'leftOuter'
  | 'rightOuter'
  | 'fullOuter'
  | 'fromCollection'
  | 'writeAsCsv'
  | 'writeAsJsonLines';

/**
 * Jobs that share one leader kill: submitted together, the leader is SIGKILLed once each of them
 * has finished some of its source subtasks and not all; a restarted JobMaster makes the standby
 * count two again. Three at a time keeps 2 cores from starving the failover.
 */
const ROUNDS: readonly (readonly Op[])[] = [
  ['union', 'mapPartition', 'readJsonLines'],
  ['leftOuter', 'rightOuter', 'fullOuter'],
  ['fromCollection', 'writeAsCsv', 'writeAsJsonLines'],
];

/**
 * Jobs run with keep-running-tasks off: their TaskManagers cancel what runs when the leader dies
 * and the next leader reruns the unfinished source subtasks (asserted), where the others' running
 * subtasks are adopted (the default). Each round has both kinds.
 */
const RERUN: ReadonlySet<Op> = new Set<Op>(['union', 'mapPartition', 'rightOuter', 'fromCollection', 'writeAsCsv']);

/** A job of a round once it ended: its state, how often it was recovered, whether the kill was mid-job. */
interface RoundResult {
  state: string;
  recoveries: number;
  /** Some recovery replayed nothing and ran the job from the start. */
  fromScratch: boolean;
  midJob: boolean;
  /** Source subtasks deployed again by a leader after the killed one. */
  rerunSources: number;
}

/** A small deterministic generator (the inputs must be the same in every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Orders o = first..first+n-1: customers 1..40 (not every one exists), names CSV must quote. */
function makeOrders(first: number, n: number, seed: number): Order[] {
  const rnd = lcg(seed);
  return Array.from({ length: n }, (_, i) => {
    const o = first + i;
    const name = o % 5 === 0 ? `a,b "${o}"` : o % 7 === 0 ? `über ${o}` : `order ${o}`;
    return { o, c: 1 + Math.floor(rnd() * 40), v: Math.floor(rnd() * 1000), name };
  });
}

/** Customers 1..45 but every 7th: orders of c = 7, 14, … match none, customers 41..45 no order. */
const CUSTOMERS: Customer[] = Array.from({ length: 45 }, (_, i) => ({ c: i + 1, region: `r${(i + 1) % 4}` })).filter(
  (c) => c.c % 7 !== 0,
);

const jsonLines = (rows: readonly unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

/** A JSON value with object keys sorted, so rows compare as sorted strings. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as { [k: string]: unknown };
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
const sortedCanonical = (rows: readonly unknown[]): string[] => rows.map(canonical).sort();

function csvOracleField(v: string | number): string {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The oracle's join rows: {o, c, region}, null for the side without a match. */
function joinRows(orders: readonly Order[], customers: readonly Customer[], type: 'left' | 'right' | 'full') {
  const rows: { o: number | null; c: number | null; region: string | null }[] = [];
  if (type !== 'right') {
    for (const o of orders) {
      const m = customers.filter((c) => c.c === o.c);
      if (m.length === 0) rows.push({ o: o.o, c: null, region: null });
      for (const c of m) rows.push({ o: o.o, c: c.c, region: c.region });
    }
  }
  for (const c of type === 'left' ? [] : customers) {
    const m = orders.filter((o) => o.c === c.c);
    if (m.length === 0) rows.push({ o: null, c: c.c, region: c.region });
    else if (type === 'right') for (const o of m) rows.push({ o: o.o, c: c.c, region: c.region });
  }
  return rows;
}

/**
 * union, mapPartition, the outer joins, readJsonLines, fromCollection and the CSV and JSON-lines
 * sinks, each in a job of its own through a leader SIGKILL that lands while its sources run (batch
 * job recovery on; running subtasks adopted, or rerun for RERUN). Each job FINISHED, was
 * recovered, and wrote exactly what plain TypeScript computes from the same input.
 */
describe('operators survive a JobMaster SIGKILL mid-job', () => {
  let cluster: LocalCluster;
  let data: string;
  // Three small files and a big one: with one subtask a file, the big one is still read when
  // the other three have finished.
  const orderFiles = [makeOrders(1, 20, 1), makeOrders(21, 20, 2), makeOrders(41, 20, 3), makeOrders(61, 800, 4)];
  const moreFiles = [
    makeOrders(10_001, 20, 5),
    makeOrders(10_021, 20, 6),
    makeOrders(10_041, 20, 7),
    makeOrders(10_061, 300, 8),
  ];
  const orders = orderFiles.flat();
  const more = moreFiles.flat();
  // Five equal splits over four subtasks: three end after one split, one reads the fifth.
  const collection = makeOrders(50_001, 2000, 9);
  const results = new Map<Op, Promise<RoundResult>>();

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 8,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
      },
    });
    data = await makeTempDir('rebound-it-operator-kills-');
    const write = async (dir: string, files: readonly (readonly unknown[])[]): Promise<void> => {
      await mkdir(join(data, dir));
      await Promise.all(files.map((f, i) => writeFile(join(data, dir, `part-${i}.jsonl`), jsonLines(f))));
    };
    await write('orders', orderFiles);
    await write('more', moreFiles);
    await write(
      'customers',
      [0, 1, 2, 3].map((i) => CUSTOMERS.filter((_, j) => j % 4 === i)),
    );
    await writeFile(join(data, 'collection.json'), JSON.stringify(collection));
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  const out = (op: Op): string => join(data, `out-${op}`);

  /** Submits the round's jobs, kills the leader once all are mid-job, waits for them to end. */
  async function runRound(ops: readonly Op[]): Promise<Map<Op, RoundResult>> {
    const jobs = await Promise.all(
      ops.map(async (op) => {
        const { jobId } = await cluster.submit(
          JOB,
          ['--op', op, '--input', data, '--output', out(op), '--batch-delay-ms', '50'],
          RERUN.has(op) ? { config: { 'execution.batch.job-recovery.keep-running-tasks': 'false' } } : {},
        );
        return { op, jobId };
      }),
    );
    const sources = await Promise.all(
      jobs.map(async ({ op, jobId }) => {
        const vertices = await cluster.waitFor(
          async () => {
            const v = (await cluster.status(jobId)).vertices.filter((x) => x.name.startsWith('Source:'));
            return v.length > 0 && v.every((x) => x.parallelism > 0) ? v : undefined;
          },
          60_000,
          `job ${jobId} (${op}) to start`,
        );
        await waitForLog(
          cluster,
          jobId,
          (f) => vertices.some((s) => finishedOf(f, s.id).length >= 2),
          60_000,
          `${op}: two source subtasks finished`,
        );
        return vertices;
      }),
    );
    const killed = await killLeader(cluster);
    // What the event log held when the leader died: some source subtask of every job unfinished.
    const midJob = await Promise.all(
      jobs.map(async ({ jobId }, i) => {
        const atKill = finishedInLog(await readEventLog(cluster, jobId));
        return sources[i]!.some((s) => finishedOf(atKill, s.id).length < s.parallelism);
      }),
    );
    const restarted = cluster.startJobMaster({ id: killed.id });
    const finals = await Promise.all(jobs.map(({ jobId }) => cluster.waitForJob(jobId, 90_000)));
    await restarted;
    const events = await cluster.taskEvents();
    return new Map(
      jobs.map(({ op }, i) => [
        op,
        {
          state: finals[i]!.state,
          recoveries: finals[i]!.recoveries.length,
          fromScratch: finals[i]!.recoveries.some((r) => r.restartedFromScratch),
          midJob: midJob[i]!,
          rerunSources: deploymentsAfter(events, jobs[i]!.jobId, killed.epoch).filter((e) =>
            sources[i]!.some((v) => v.id === e.vertexId),
          ).length,
        },
      ]),
    );
  }

  /** The job of `op` through its round's kill: FINISHED, recovered, killed mid-job, rerun if RERUN. */
  async function survived(op: Op): Promise<void> {
    if (!results.has(op)) {
      const round = ROUNDS.find((r) => r.includes(op))!;
      const all = runRound(round);
      for (const o of round) {
        const one = all.then((m) => m.get(o)!);
        one.catch(() => {}); // each test of the round reports the failure when it awaits it
        results.set(o, one);
      }
    }
    const r = await results.get(op)!;
    expect(r).toEqual({
      state: 'FINISHED',
      recoveries: expect.any(Number) as number,
      fromScratch: false,
      midJob: true,
      rerunSources: expect.any(Number) as number,
    });
    expect(r.recoveries).toBeGreaterThanOrEqual(1);
    if (RERUN.has(op)) expect(r.rerunSources).toBeGreaterThanOrEqual(1);
  }

  const jsonOutput = async (op: Op): Promise<unknown[]> =>
    (await readSinkLines(out(op))).map((l) => JSON.parse(l) as unknown);

  it('union', async () => {
    await survived('union');
    expect(sortedCanonical(await jsonOutput('union'))).toEqual(sortedCanonical([...orders, ...more]));
  });

  it('mapPartition', async () => {
    await survived('mapPartition');
    const expected = orders.filter((r) => r.v % 3 !== 0).map((r) => ({ o: r.o, v2: 2 * r.v }));
    expect(sortedCanonical(await jsonOutput('mapPartition'))).toEqual(sortedCanonical(expected));
  });

  it('readJsonLines (grouped)', async () => {
    await survived('readJsonLines');
    const groups = new Map<number, { c: number; n: number; total: number }>();
    for (const r of orders) {
      const g = groups.get(r.c) ?? { c: r.c, n: 0, total: 0 };
      g.n += 1;
      g.total += r.v;
      groups.set(r.c, g);
    }
    expect(sortedCanonical(await jsonOutput('readJsonLines'))).toEqual(sortedCanonical([...groups.values()]));
  });

  for (const [op, type] of [
    ['leftOuter', 'left'],
    ['rightOuter', 'right'],
    ['fullOuter', 'full'],
  ] as const) {
    it(`${type} outer join`, async () => {
      await survived(op);
      const expected = joinRows(orders, CUSTOMERS, type);
      // The input has the unmatched rows this join must keep.
      expect(expected.some((r) => r.c === null)).toBe(type !== 'right');
      expect(expected.some((r) => r.o === null)).toBe(type !== 'left');
      expect(sortedCanonical(await jsonOutput(op))).toEqual(sortedCanonical(expected));
    });
  }

  it('fromCollection', async () => {
    await survived('fromCollection');
    const expected = collection.map((r) => ({ o: r.o, tag: `#${r.o}` }));
    expect(sortedCanonical(await jsonOutput('fromCollection'))).toEqual(sortedCanonical(expected));
  });

  it('writeAsCsv', async () => {
    await survived('writeAsCsv');
    const dir = out('writeAsCsv');
    const files = (await readdir(dir)).filter((n) => n.startsWith('part-'));
    const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')));
    // Every committed file starts with the header, once.
    for (const t of texts) expect(t.split('\n')[0]).toBe('o,name,v');
    const rows = texts.flatMap((t) => t.split('\n').slice(1)).filter((l) => l !== '');
    const expected = orders.map((r) => [r.o, r.name, r.v].map(csvOracleField).join(','));
    expect(rows.sort()).toEqual(expected.sort());
  });

  it('writeAsJsonLines', async () => {
    await survived('writeAsJsonLines');
    // Byte for byte the lines JSON.stringify gives, each once.
    const expected = orders.map((r) => JSON.stringify({ o: r.o, nested: { name: r.name, parts: [r.v, null] } }));
    expect((await readSinkLines(out('writeAsJsonLines'))).sort()).toEqual(expected.sort());
  });
});
