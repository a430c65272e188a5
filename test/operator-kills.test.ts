import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { deploymentsAfter, finishedInLog, finishedOf, killLeader, readEventLog, waitForLog } from './recovery-util.js';
import { makeTempDir, readSinkLines } from './util.js';
import {
  CUSTOMERS,
  csvOracleField,
  groupsOf,
  joinRows,
  jsonLines,
  makeOrders,
  sortedCanonical,
} from './operator-kill-data.js';

const JOB = 'test/fixtures/operator-kill.ts';

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
 * subtasks are adopted (the default). Each round has both kinds, and every operator runs twice:
 * in pass 0 the jobs of RERUN rerun, in pass 1 the others do.
 */
const RERUN: ReadonlySet<Op> = new Set<Op>(['union', 'mapPartition', 'rightOuter', 'fromCollection', 'writeAsCsv']);
type Pass = 0 | 1;
const PASSES: readonly Pass[] = [0, 1];
const rerun = (op: Op, pass: Pass): boolean => RERUN.has(op) === (pass === 0);
const modeName = (op: Op, pass: Pass): string =>
  rerun(op, pass) ? 'running subtasks rerun' : 'running subtasks adopted';

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

/**
 * union, mapPartition, the outer joins, readJsonLines, fromCollection and the CSV and JSON-lines
 * sinks, each in a job of its own through a leader SIGKILL that lands while its sources run (batch
 * job recovery on), once with its running subtasks adopted and once with them rerun
 * (keep-running-tasks off). Each job FINISHED, was recovered, and wrote exactly what plain
 * TypeScript computes from the same input.
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
  const results = new Map<string, Promise<RoundResult>>();

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

  const out = (op: Op, pass: Pass): string => join(data, `out-${op}-${pass}`);

  /** Submits the round's jobs, kills the leader once all are mid-job, waits for them to end. */
  async function runRound(ops: readonly Op[], pass: Pass): Promise<Map<Op, RoundResult>> {
    const jobs = await Promise.all(
      ops.map(async (op) => {
        const { jobId } = await cluster.submit(
          JOB,
          ['--op', op, '--input', data, '--output', out(op, pass), '--batch-delay-ms', '50'],
          rerun(op, pass) ? { config: { 'execution.batch.job-recovery.keep-running-tasks': 'false' } } : {},
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

  /** The job of `op` through its round's kill: FINISHED, recovered, killed mid-job, rerun if so. */
  async function survived(op: Op, pass: Pass): Promise<void> {
    if (!results.has(`${op}:${pass}`)) {
      const round = ROUNDS.find((r) => r.includes(op))!;
      const all = runRound(round, pass);
      for (const o of round) {
        const one = all.then((m) => m.get(o)!);
        one.catch(() => {}); // each test of the round reports the failure when it awaits it
        results.set(`${o}:${pass}`, one);
      }
    }
    const r = await results.get(`${op}:${pass}`)!;
    expect(r).toEqual({
      state: 'FINISHED',
      recoveries: expect.any(Number) as number,
      fromScratch: false,
      midJob: true,
      rerunSources: expect.any(Number) as number,
    });
    expect(r.recoveries).toBeGreaterThanOrEqual(1);
    if (rerun(op, pass)) expect(r.rerunSources).toBeGreaterThanOrEqual(1);
  }

  const jsonOutput = async (op: Op, pass: Pass): Promise<unknown[]> =>
    (await readSinkLines(out(op, pass))).map((l) => JSON.parse(l) as unknown);

  for (const pass of PASSES) {
    it(`union (${modeName('union', pass)})`, async () => {
      await survived('union', pass);
      expect(sortedCanonical(await jsonOutput('union', pass))).toEqual(sortedCanonical([...orders, ...more]));
    });

    it(`mapPartition (${modeName('mapPartition', pass)})`, async () => {
      await survived('mapPartition', pass);
      const expected = orders.filter((r) => r.v % 3 !== 0).map((r) => ({ o: r.o, v2: 2 * r.v }));
      expect(sortedCanonical(await jsonOutput('mapPartition', pass))).toEqual(sortedCanonical(expected));
    });

    it(`readJsonLines, grouped (${modeName('readJsonLines', pass)})`, async () => {
      await survived('readJsonLines', pass);
      expect(sortedCanonical(await jsonOutput('readJsonLines', pass))).toEqual(
        sortedCanonical([...groupsOf(orders).values()]),
      );
    });

    for (const [op, type] of [
      ['leftOuter', 'left'],
      ['rightOuter', 'right'],
      ['fullOuter', 'full'],
    ] as const) {
      it(`${type} outer join (${modeName(op, pass)})`, async () => {
        await survived(op, pass);
        const expected = joinRows(orders, CUSTOMERS, type);
        // The input has the unmatched rows this join must keep.
        expect(expected.some((r) => r.c === null)).toBe(type !== 'right');
        expect(expected.some((r) => r.o === null)).toBe(type !== 'left');
        expect(sortedCanonical(await jsonOutput(op, pass))).toEqual(sortedCanonical(expected));
      });
    }

    it(`fromCollection (${modeName('fromCollection', pass)})`, async () => {
      await survived('fromCollection', pass);
      const expected = collection.map((r) => ({ o: r.o, tag: `#${r.o}` }));
      expect(sortedCanonical(await jsonOutput('fromCollection', pass))).toEqual(sortedCanonical(expected));
    });

    it(`writeAsCsv (${modeName('writeAsCsv', pass)})`, async () => {
      await survived('writeAsCsv', pass);
      const dir = out('writeAsCsv', pass);
      const files = (await readdir(dir)).filter((n) => n.startsWith('part-'));
      const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')));
      // Every committed file starts with the header, once.
      for (const t of texts) expect(t.split('\n')[0]).toBe('o,name,v');
      const rows = texts.flatMap((t) => t.split('\n').slice(1)).filter((l) => l !== '');
      const expected = orders.map((r) => [r.o, r.name, r.v].map(csvOracleField).join(','));
      expect(rows.sort()).toEqual(expected.sort());
    });

    it(`writeAsJsonLines (${modeName('writeAsJsonLines', pass)})`, async () => {
      await survived('writeAsJsonLines', pass);
      // Byte for byte the lines JSON.stringify gives, each once.
      const expected = orders.map((r) => JSON.stringify({ o: r.o, nested: { name: r.name, parts: [r.v, null] } }));
      expect((await readSinkLines(out('writeAsJsonLines', pass))).sort()).toEqual(expected.sort());
    });
  }

  /**
   * A kill while the stage after a join's or a grouping's exchange runs (its sources finished): no
   * finished source subtask runs again, the running stage is adopted or (keep-running-tasks off)
   * rerun, and the output is exact.
   */
  type DownstreamOp = 'leftOuter' | 'fullOuter' | 'readJsonLines';
  const DOWNSTREAM: readonly DownstreamOp[] = ['leftOuter', 'fullOuter', 'readJsonLines'];
  /** ms per batch of 5 of the stage's records: ~7 s for a join's ~860 rows, ~6 s for 38 groups. */
  const DOWNSTREAM_DELAY_MS: Record<DownstreamOp, number> = { leftOuter: 40, fullOuter: 40, readJsonLines: 800 };
  const downOut = (op: Op, pass: Pass): string => join(data, `down-${op}-${pass}`);
  const downstreamRounds = new Map<
    Pass,
    Promise<Map<DownstreamOp, { sourcesRerun: number; stageRedeployed: number }>>
  >();

  async function runDownstreamRound(pass: Pass) {
    const jobs = await Promise.all(
      DOWNSTREAM.map(async (op) => {
        const { jobId } = await cluster.submit(
          JOB,
          [
            '--op',
            op,
            '--input',
            data,
            '--output',
            downOut(op, pass),
            '--downstream-delay-ms',
            String(DOWNSTREAM_DELAY_MS[op]),
          ],
          rerun(op, pass) ? { config: { 'execution.batch.job-recovery.keep-running-tasks': 'false' } } : {},
        );
        return { op, jobId };
      }),
    );
    const vertices = await Promise.all(
      jobs.map(async ({ op, jobId }) => {
        const { sources, stage } = await cluster.waitFor(
          async () => {
            const all = (await cluster.status(jobId)).vertices;
            const stage = all.find((v) => v.name.includes('Downstream'));
            const sources = all.filter((v) => v.name.startsWith('Source:'));
            return stage && sources.every((v) => v.parallelism > 0) ? { sources, stage } : undefined;
          },
          60_000,
          `job ${jobId} (${op}) to start`,
        );
        // Every source subtask finished, and the stage deployed and not finished.
        await waitForLog(
          cluster,
          jobId,
          (f) => sources.every((v) => finishedOf(f, v.id).length === v.parallelism),
          60_000,
          `${op}: its sources finished`,
        );
        // Its parallelism is decided once its inputs are there: read it when it runs.
        const running = await cluster.waitFor(
          async () => {
            const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.vertexId === stage.id);
            if (!events.some((e) => e.event === 'task.deploy') || events.some((e) => e.event === 'task.finish'))
              return undefined;
            const now = (await cluster.status(jobId)).vertices.find((v) => v.id === stage.id);
            return now && now.parallelism > 0 ? now : undefined;
          },
          60_000,
          `${op}: its downstream stage running`,
        );
        return { sources, stage: running };
      }),
    );
    const killed = await killLeader(cluster);
    const atKill = await Promise.all(jobs.map(async ({ jobId }) => finishedInLog(await readEventLog(cluster, jobId))));
    const restarted = cluster.startJobMaster({ id: killed.id });
    const finals = await Promise.all(jobs.map(({ jobId }) => cluster.waitForJob(jobId, 90_000)));
    await restarted;
    const events = await cluster.taskEvents();
    return new Map(
      jobs.map(({ op, jobId }, i) => {
        const { sources, stage } = vertices[i]!;
        expect(finals[i]!.state).toBe('FINISHED');
        // The kill came while the stage ran: the log had it unfinished.
        expect(finishedOf(atKill[i]!, stage.id).length).toBeLessThan(stage.parallelism);
        const after = deploymentsAfter(events, jobId, killed.epoch);
        return [
          op,
          {
            sourcesRerun: after.filter((e) => sources.some((v) => v.id === e.vertexId)).length,
            stageRedeployed: after.filter((e) => e.vertexId === stage.id).length,
          },
        ] as const;
      }),
    );
  }

  async function survivedDownstream(op: DownstreamOp, pass: Pass): Promise<void> {
    if (!downstreamRounds.has(pass)) {
      const round = runDownstreamRound(pass);
      round.catch(() => {}); // each test of the round reports the failure when it awaits it
      downstreamRounds.set(pass, round);
    }
    const r = (await downstreamRounds.get(pass)!).get(op)!;
    expect(r.sourcesRerun).toBe(0);
    if (rerun(op, pass)) expect(r.stageRedeployed).toBeGreaterThanOrEqual(1);
    else expect(r.stageRedeployed).toBe(0);
  }

  for (const pass of PASSES) {
    for (const [op, type] of [
      ['leftOuter', 'left'],
      ['fullOuter', 'full'],
    ] as const) {
      it(`${type} outer join, killed in its downstream stage (${modeName(op, pass)})`, async () => {
        await survivedDownstream(op, pass);
        const rows = (await readSinkLines(downOut(op, pass))).map((l) => JSON.parse(l) as unknown);
        expect(sortedCanonical(rows)).toEqual(sortedCanonical(joinRows(orders, CUSTOMERS, type)));
      });
    }
    it(`groupBy().aggregate(), killed in its downstream stage (${modeName('readJsonLines', pass)})`, async () => {
      await survivedDownstream('readJsonLines', pass);
      const rows = (await readSinkLines(downOut('readJsonLines', pass))).map((l) => JSON.parse(l) as unknown);
      expect(sortedCanonical(rows)).toEqual(sortedCanonical([...groupsOf(orders).values()]));
    });
  }
});
