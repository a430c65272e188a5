import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customer, lineItem, order, writeTpchCsv } from '@rebound/example-support';
import {
  csvExpected,
  joinExpected,
  q1Expected,
  q3Expected,
  range,
  topWordsExpected,
  writeRowsCsv,
} from '../examples/oracles.js';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  allSubtasks,
  deploymentsAfter,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  killLeader,
  readEventLog,
  redeployedSubtasks,
  waitForLog,
} from './recovery-util.js';
import { csvAsDirectory, makeTempDir, readSinkLines } from './util.js';

/**
 * The examples through a real cluster whose leader is SIGKILLed while a source stage runs: the
 * output equals DuckDB's answer to the same SQL, and a standby reruns exactly the subtasks the
 * event log did not have finished (the enumerator's splits come back from its batch snapshot,
 * CSV record boundaries included).
 */
describe('the examples survive a leader kill mid-stage', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's own rule, which these cases check: every unfinished subtask is redeployed.
        // Adopting running ones instead is test/keep-running's subject.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
      },
    });
    data = await makeTempDir('rebound-it-csv-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  /**
   * Kills the leader once `done` of the `parallelism` subtasks of the source named `name`
   * finished (the job has `vertices` vertices); checks the rerun.
   */
  async function killWhileRunning(jobId: string, name: string, vertices: number, parallelism = 4, done = 2) {
    const s = await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        const v = st.vertices.find((x) => x.name.startsWith(name));
        return st.vertices.length === vertices && v && v.parallelism > 0 ? { st, v } : undefined;
      },
      30_000,
      `job ${jobId} to start`,
    );
    const source = s.v;
    expect(source.parallelism).toBe(parallelism);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= done,
      60_000,
      `${done} source subtask(s) finished`,
    );
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const finishedSources = finishedOf(atKill, source.id).length;
    expect(finishedSources).toBeGreaterThanOrEqual(done);
    expect(finishedSources).toBeLessThan(parallelism);
    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 90_000);
    await standby;
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({ restartedFromScratch: false });
  }

  const withoutHeaders = (lines: string[], header: string): string[] => lines.filter((l) => l !== header);

  it('csv-groupby', async () => {
    const tables = join(data, 'groupby');
    const files = writeTpchCsv(tables, 0.05, 5);
    await csvAsDirectory(files.orders, 20);
    const out = join(data, 'groupby-out');
    const { jobId } = await cluster.submit('examples/csv-groupby.ts', [
      '--input',
      files.orders,
      '--output',
      out,
      '--record-delay-ms',
      '8',
    ]);
    await killWhileRunning(jobId, 'Source: Csv', 2);
    const header = 'o_orderpriority,orders,total_cents,avg_cents,first_order,last_order,commented';
    expect(withoutHeaders(await readSinkLines(out), header).sort()).toEqual(await csvExpected(files.orders));
  });

  it('tpch-q3', async () => {
    const tables = join(data, 'q3');
    const files = writeTpchCsv(tables, 0.05, 6);
    await csvAsDirectory(files.lineitem, 60);
    const out = join(data, 'q3-out');
    const { jobId } = await cluster.submit('examples/tpch-q3.ts', [
      '--input',
      tables,
      '--output',
      out,
      '--record-delay-ms',
      '2',
    ]);
    // customer, orders, lineitem, customer ⋈ orders, lineitem ⋈ that, aggregate, top-N.
    await killWhileRunning(jobId, 'Source: lineitem', 7);
    const header = 'l_orderkey,revenue,o_orderdate,o_shippriority';
    expect(withoutHeaders(await readSinkLines(out), header)).toEqual(await q3Expected(tables, 10));
  });

  it('tpch-q1 (generated rows)', async () => {
    const [rows, seed] = [2000, 17];
    const lineitem = writeRowsCsv(
      join(data, 'q1-lineitem.csv'),
      range(rows, (i) => lineItem(seed, i)),
    );
    const out = join(data, 'q1-out');
    // Five splits for two readers: one reads three, the other two, and finishes first.
    const { jobId } = await cluster.submit('examples/tpch-q1.ts', [
      ...['--rows', String(rows), '--seed', String(seed), '--split-size', '400', '--parallelism', '2'],
      ...['--output', out, '--record-delay-ms', '4'],
    ]);
    await killWhileRunning(jobId, 'Source: Rows', 2, 2, 1);
    expect((await readSinkLines(out)).sort()).toEqual(await q1Expected(lineitem));
  });

  it('join (generated orders and customers)', async () => {
    const [orders, customers, seed] = [1230, 100, 23];
    const orderCsv = writeRowsCsv(
      join(data, 'join-orders.csv'),
      range(orders, (i) => order(seed, i, customers)),
    );
    const customerCsv = writeRowsCsv(
      join(data, 'join-customers.csv'),
      range(customers, (i) => customer(seed, i)),
    );
    const out = join(data, 'join-out');
    const { jobId } = await cluster.submit('examples/join.ts', [
      ...['--orders', String(orders), '--customers', String(customers), '--seed', String(seed)],
      ...['--split-size', '400', '--output', out, '--record-delay-ms', '4'],
    ]);
    // Orders in four splits, one reader each; the last split (30 orders) is done long before the others.
    await killWhileRunning(jobId, 'Source: Orders', 3, 4, 1);
    expect((await readSinkLines(out)).sort()).toEqual(await joinExpected(orderCsv, customerCsv));
  });

  it('top-words', async () => {
    const dir = join(data, 'words');
    await mkdir(dir);
    const vocab = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
    // Three small files and a big one: the big file's reader still runs when the others are done.
    for (const [f, n] of [30, 30, 30, 200].entries()) {
      const lines = range(n, (i) => `${vocab[(i * 7 + f) % 12]} ${vocab[(i * i) % 12]}, ${vocab[(i + f) % 5]}!`);
      await writeFile(join(dir, `part-${f}.txt`), lines.join('\n') + '\n');
    }
    const out = join(data, 'top-words-out');
    const { jobId } = await cluster.submit('examples/top-words.ts', [
      ...['--input', dir, '--output', out, '--n', '5', '--record-delay-ms', '15'],
    ]);
    await killWhileRunning(jobId, 'Source: TextFiles', 3);
    expect(await readSinkLines(out)).toEqual(await topWordsExpected(`${dir}/*.txt`, 5));
  });
});
