import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

/** The Flink-style commands end to end: -p, info, list filters, status with recoveries, logs, config --cluster. */
describe('rebound CLI habits against a running cluster', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 2, slots: 2 });
    data = await makeTempDir('rebound-it-habits-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('submit -p runs every vertex without its own parallelism with P subtasks; info shows the same plan', async () => {
    const files = await generateTextFiles(join(data, 'in'), { files: 5, linesPerFile: 50, seed: 3 });
    const args = ['--input', join(data, 'in'), '--output', join(data, 'out')];

    const plain = await cluster.rebound(['info', 'examples/wordcount.ts', '--', ...args]);
    expect(plain.code, plain.stderr).toBe(0);
    // Without -p the JobMaster decides a source's parallelism from its splits and the slots it sees.
    expect(plain.stdout).toMatch(/Source: TextFiles -> FlatMap -> Map\s+v-\S+\s+adaptive\s+source/);
    expect(plain.stdout).toMatch(/Sum\(1\) -> Sink: TextFiles\s+v-\S+\s+adaptive\s+sink/);
    const planned = await cluster.rebound(['info', 'examples/wordcount.ts', '-p', '3', '--json', '--', ...args]);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as { vertices: { parallelism: number | null }[]; edges: { distribution: string }[] };
    expect(plan.vertices.map((v) => v.parallelism)).toEqual([3, 3]);
    expect(plan.edges.map((e) => e.distribution)).toEqual(['HASH']);

    const r = await cluster.rebound(['submit', 'examples/wordcount.ts', '-p', '3', '--', ...args]);
    expect(r.code, r.stderr).toBe(0);
    const jobId = /submitted job wordcount as ([0-9a-f]{32})/.exec(r.stdout)?.[1];
    expect(jobId, r.stdout).toBeDefined();
    const status = await cluster.status(jobId!);
    expect(status.state).toBe('FINISHED');
    expect(status.vertices.map((v) => [v.parallelism, v.parallelismDecidedAdaptively])).toEqual([
      [3, false],
      [3, false],
    ]);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(join(data, 'out')))).toEqual([]);

    const running = JSON.parse((await cluster.rebound(['list', '--running', '--json'])).stdout) as { jobs: unknown[] };
    expect(running.jobs).toEqual([]);
    const all = JSON.parse((await cluster.rebound(['list', '--all', '--json'])).stdout) as { jobs: { jobId: string }[] };
    expect(all.jobs.map((j) => j.jobId)).toContain(jobId);

    const human = await cluster.rebound(['status', jobId!]);
    expect(human.stdout).toMatch(/submitted\s+[\d.]+ (ms|s|min).* ago \(\d{4}-/);
    expect(human.stdout).not.toMatch(/\d{13}/);
  });

  it('logs are readable, filtered by level and job, and untouched with --json', async () => {
    const warn = await cluster.rebound(['logs', 'jm-1', '--level', 'info', '--workdir', cluster.workdir]);
    expect(warn.code, warn.stderr).toBe(0);
    expect(warn.stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: /m);
    expect(warn.stdout).not.toMatch(/^\{"level"/m);
    const raw = await cluster.rebound(['logs', 'tm-1', '--json', '--workdir', cluster.workdir]);
    for (const line of raw.stdout.trim().split('\n')) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const bad = await cluster.rebound(['logs', 'tm-9', '--json', '--workdir', cluster.workdir]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: 'CONFIG_INVALID', message: expect.stringContaining('jm-1, tm-1, tm-2') } });
  });

  it('config --cluster shows the values the daemons run with', async () => {
    const r = await cluster.rebound(['config', '--cluster', cluster.workdir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/heartbeat\.timeout\s+2 s\s+cluster \(default 50 s\)/);
  });
});
