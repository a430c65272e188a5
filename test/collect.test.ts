import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbQuery, sqlString } from '@rebound/api/testing/duckdb';
import { writeTpchCsv } from '@rebound/example-support';
import { LocalCluster, REPO_ROOT, suiteFailed } from './harness.js';
import { finishedOf, killLeader, waitForLog } from './recovery-util.js';
import { makeTempDir } from './util.js';

const JOB = 'test/fixtures/collect.ts';

/** What the fixture's `--mode rows` collects, row i of n (the generator's function). */
function generatedRow(i: number): unknown {
  return { i, label: `row ${i}`, even: i % 2 === 0, half: i % 3 === 0 ? null : i / 2 };
}

/**
 * collect() through a real cluster: the committed result against DuckDB, streamed through a
 * leader SIGKILL (resumed on the next leader with no byte twice and none missing), printed by
 * `rebound submit` and `rebound results` in each output format, and the limits.
 */
describe('collect()', () => {
  let cluster: LocalCluster;
  let data: string;
  let orders: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      config: { 'execution.batch.job-recovery.enabled': 'true' },
    });
    data = await makeTempDir('rebound-it-collect-');
    orders = writeTpchCsv(join(data, 'tpch'), 0.02, 3).orders;
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
  });

  async function expectedGroupBy(input = orders): Promise<unknown[]> {
    const rows = await duckdbQuery(
      `select o_orderpriority, count(*) orders, sum(o_totalprice) total_cents
       from read_csv(${sqlString(input)}, header = true) group by o_orderpriority`,
    );
    return rows.map((r) => ({ o_orderpriority: r.o_orderpriority, orders: r.orders, total_cents: r.total_cents }));
  }

  const byPriority = (a: unknown, b: unknown): number =>
    String((a as { o_orderpriority: string }).o_orderpriority).localeCompare(
      String((b as { o_orderpriority: string }).o_orderpriority),
    );

  it('submit prints the collected rows (jsonl when piped), equal to DuckDB', async () => {
    const r = await cluster.submit(JOB, ['--mode', 'groupby', '--input', orders], { wait: true });
    expect(r.code, r.stderr).toBe(0);
    const [first, ...rows] = r.stdout.trim().split('\n');
    expect(JSON.parse(first!)).toEqual({ jobId: r.jobId });
    const got = rows.map((l) => JSON.parse(l) as unknown).sort(byPriority);
    expect(got).toEqual((await expectedGroupBy()).sort(byPriority));

    // results: the same rows again, in each format.
    const jsonl = await cluster.rebound(['results', r.jobId, '--cluster', cluster.workdir, '--output-format', 'jsonl']);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    expect(jsonl.stdout.trim().split('\n')).toEqual(rows);
    const csv = await cluster.rebound(['results', r.jobId, '--cluster', cluster.workdir, '--output-format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const csvLines = csv.stdout.trim().split('\n');
    expect(csvLines[0]).toBe('o_orderpriority,orders,total_cents');
    expect(csvLines.slice(1)).toEqual(
      rows.map((l) => {
        const o = JSON.parse(l) as { o_orderpriority: string; orders: number; total_cents: number };
        return `${o.o_orderpriority},${o.orders},${o.total_cents}`;
      }),
    );
    const table = await cluster.rebound(['results', r.jobId, '--cluster', cluster.workdir, '--output-format', 'table']);
    expect(table.code, table.stderr).toBe(0);
    const t = table.stdout.trim().split('\n');
    expect(t[0]).toMatch(/^\+-+\+-+\+-+\+$/);
    expect(t[1]).toMatch(/^\| o_orderpriority +\| orders +\| total_cents +\|$/);
    expect(t).toHaveLength(rows.length + 5);
    expect(t.at(-1)).toBe(`${rows.length} rows`);
    const json = await cluster.rebound(['results', r.jobId, '--cluster', cluster.workdir, '--output-format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(rows.map((l) => JSON.parse(l) as unknown));
  });

  it('json is one valid array, [] for a job that collects no rows', async () => {
    const empty = await cluster.rebound([
      'submit',
      resolve(REPO_ROOT, JOB),
      '--output-format',
      'json',
      '--',
      ...['--mode', 'rows', '--count', '0'],
    ]);
    expect(empty.code, empty.stderr).toBe(0);
    // stdout holds only the rows, as with csv and jsonl.
    expect(JSON.parse(empty.stdout)).toEqual([]);
    const three = await cluster.submit(JOB, ['--mode', 'rows', '--count', '3'], { wait: true });
    expect(three.code, three.stderr).toBe(0);
    const got = await cluster.rebound([
      'results',
      three.jobId,
      '--cluster',
      cluster.workdir,
      '--output-format',
      'json',
    ]);
    expect(got.code, got.stderr).toBe(0);
    const parsed = JSON.parse(got.stdout) as { i: number }[];
    expect(parsed.sort((a, b) => a.i - b.i)).toEqual([0, 1, 2].map(generatedRow));
  });

  it('results: one clear line for an unknown job, a job without collect() and a bad format', async () => {
    const unknown = await cluster.rebound(['results', 'ffffffffffffffff', '--cluster', cluster.workdir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    const format = await cluster.rebound([
      'results',
      'whatever',
      '--cluster',
      cluster.workdir,
      '--output-format',
      'xml',
    ]);
    expect(format.code).toBe(2);
    expect(format.stderr.trim().split('\n')).toEqual([
      'rebound: --output-format xml: expected one of table, csv, jsonl, json',
    ]);
    // submit refuses it before building or submitting anything.
    const submitted = await cluster.rebound(['submit', resolve(REPO_ROOT, JOB), '--output-format', 'yaml', '--']);
    expect(submitted.code).toBe(2);
    expect(submitted.stderr.trim()).toBe('rebound: --output-format yaml: expected one of table, csv, jsonl, json');
    const twoDocuments = await cluster.rebound([
      'submit',
      resolve(REPO_ROOT, JOB),
      '--json',
      '--output-format',
      'json',
      '--',
    ]);
    expect(twoDocuments.code).toBe(2);
    // --json makes the error JSON too: one document on stderr.
    expect(JSON.parse(twoDocuments.stderr)).toEqual({
      error: {
        code: 'USAGE',
        message:
          '--output-format json with --json: --json prints JSON Lines, rows included; drop --json, or --output-format',
        exitCode: 2,
      },
    });
    const w = await cluster.submit('examples/wordcount.ts', ['--input', orders, '--output', join(data, 'wc-out')], {
      wait: true,
    });
    expect(w.code, w.stderr).toBe(0);
    const none = await cluster.rebound(['results', w.jobId, '--cluster', cluster.workdir]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('has no collect() sink');
  });

  it('the stream resumes on the next leader after a SIGKILL, exactly', async () => {
    const n = 40_000;
    const r = await cluster.submit(JOB, ['--mode', 'rows', '--count', String(n)], { wait: true });
    expect(r.code, r.stderr).toBe(0);
    const client = await cluster.clusterClient();
    const received: Buffer[] = [];
    const resumedAt: { fileIndex: number; offset: number }[] = [];
    let chunks = 0;
    let killed: Awaited<ReturnType<typeof killLeader>> | undefined;
    await client.fetchJobResult(
      r.jobId,
      async (data) => {
        received.push(data);
        // Mid-stream (file 0 of 4 still streaming): the leader dies, a standby takes over.
        if (++chunks === 3) {
          killed = await killLeader(cluster);
          await cluster.startJobMaster({ id: killed.id });
        }
      },
      { streamTimeoutMs: 60_000, maxChunkBytes: 8 * 1024, onResume: (at) => resumedAt.push(at) },
    );
    expect(killed).toBeDefined();
    expect(resumedAt.length).toBeGreaterThanOrEqual(1);
    // Resumed where the first stream broke, not from the start.
    expect(resumedAt[0]!.fileIndex > 0 || resumedAt[0]!.offset > 0).toBe(true);
    expect((await cluster.leader())?.epoch).toBeGreaterThan(killed!.epoch);
    const lines = Buffer.concat(received).toString('utf8').trim().split('\n');
    expect(lines).toHaveLength(n);
    const rows = lines.map((l) => JSON.parse(l) as { i: number });
    // No row twice and none missing: the generator's rows, each once.
    expect(rows.map((x) => x.i).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    for (const row of rows.slice(0, 50)) expect(row).toEqual(generatedRow(row.i));
    // Byte for byte the committed files, in subtask order.
    const dir = join(cluster.haDir, 'jobs', r.jobId, 'collect');
    const files = await Promise.all(
      [0, 1, 2, 3].map((s) => readFile(join(dir, `part-${String(s).padStart(5, '0')}`)).catch(() => Buffer.alloc(0))),
    );
    expect(Buffer.concat(received).equals(Buffer.concat(files))).toBe(true);
  });

  it('is committed exactly once through a leader kill mid-stage', async () => {
    // Four files (three small, one big) read slowly: the kill lands with the source stage half done.
    const dir = join(data, 'orders-dir');
    await mkdir(dir);
    const [header, ...rows] = (await readFile(writeTpchCsv(join(data, 'mid'), 0.05, 4).orders, 'utf8'))
      .split(/\n(?=\d)/)
      .filter((l) => l.trim() !== '');
    const parts = [rows.slice(0, 20), rows.slice(20, 40), rows.slice(40, 60), rows.slice(60)];
    await Promise.all(
      parts.map((p, i) => writeFile(join(dir, `part-${i}.csv`), [header, ...p].join('\n').replace(/\n*$/, '\n'))),
    );
    const { jobId } = await cluster.submit(JOB, ['--mode', 'groupby', '--input', dir, '--record-delay-ms', '8']);
    const source = await cluster.waitFor(
      async () =>
        (await cluster.status(jobId)).vertices.find((v) => v.name.startsWith('Source: Csv') && v.parallelism > 0),
      30_000,
      `job ${jobId} to start`,
    );
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 2,
      60_000,
      'two source subtasks finished',
    );
    const killed = await killLeader(cluster);
    const restarted = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 90_000);
    await restarted;
    expect(final.recoveries.length).toBeGreaterThanOrEqual(1);
    const r = await cluster.rebound(['results', jobId, '--cluster', cluster.workdir, '--output-format', 'jsonl']);
    expect(r.code, r.stderr).toBe(0);
    const got = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(got.sort(byPriority)).toEqual((await expectedGroupBy(`${dir}/*.csv`)).sort(byPriority));
  });

  it('a result above collect-sink.max-rows fails the job, naming the key', async () => {
    const r = await cluster.submit(JOB, ['--mode', 'rows', '--count', '500'], {
      wait: true,
      config: { 'collect-sink.max-rows': '100' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('collect() result has 500 rows, above collect-sink.max-rows=100');
  });
});
