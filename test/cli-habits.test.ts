import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, runRebound, suiteFailed } from './harness.js';
import { httpPortsOf, portTakenLine } from './local-up-output.js';
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

  it('local up says recovery is off and how to turn it on, and puts jm-1 on 8081 unless it is taken', () => {
    const lines = cluster.upOutput.split('\n');
    expect(lines).toContain(
      '  recovery   batch job recovery is off: a leader kill reruns every running job from the start; turn it on with -D execution.batch.job-recovery.enabled=true',
    );
    // Another cluster on this machine may hold 8081: then the line says so and jm-1 is elsewhere.
    const taken = lines.includes(portTakenLine('jm-1', 8081));
    expect(httpPortsOf(cluster.upOutput).get('jm-1') === 8081).toBe(!taken);
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
    const plan = JSON.parse(planned.stdout) as {
      vertices: { parallelism: number | null }[];
      edges: { distribution: string }[];
    };
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
    const all = JSON.parse((await cluster.rebound(['list', '--all', '--json'])).stdout) as {
      jobs: { jobId: string }[];
    };
    expect(all.jobs.map((j) => j.jobId)).toContain(jobId);

    const human = await cluster.rebound(['status', jobId!]);
    expect(human.stdout).toMatch(/submitted\s+[\d.]+ (ms|s|min).* ago \(\d{4}-/);
    // No raw epoch milliseconds; a job id's run of digits is part of a word and does not count.
    expect(human.stdout).not.toMatch(/\b\d{13}\b/);
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
    expect(JSON.parse(bad.stderr)).toMatchObject({
      error: { code: 'CONFIG_INVALID', message: expect.stringContaining('jm-1, tm-1, tm-2') },
    });
  });

  it('config --cluster shows the values the daemons run with; --workdir is the same', async () => {
    const r = await cluster.rebound(['config', '--cluster', cluster.workdir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/heartbeat\.timeout\s+2 s\s+cluster \(default 50 s\)/);
    const w = await cluster.rebound(['config', '--workdir', cluster.workdir]);
    expect([w.code, w.stdout, w.stderr]).toEqual([0, r.stdout, '']);
  });
  it('run is submit, with the job arguments right after the job file; ids take prefixes everywhere', async () => {
    const files = await generateTextFiles(join(data, 'run-in'), { files: 2, linesPerFile: 20, seed: 5 });
    const out = join(data, 'run-out');
    // As `flink run x.jar --input …`: no -- needed, and the job's --input is not ours.
    const r = await cluster.rebound([
      'run',
      '--cluster',
      cluster.workdir,
      'examples/wordcount.ts',
      '--input',
      join(data, 'run-in'),
      '--output',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const jobId = /^submitted job wordcount as ([0-9a-f]{32})$/m.exec(r.stdout)?.[1];
    expect(jobId, r.stdout).toBeDefined();
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);

    const prefix = jobId!.slice(0, 8);
    const status = await cluster.rebound(['status', prefix, '--workdir', cluster.workdir]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(jobId);
    const events = await cluster.rebound(['events', prefix, '--cluster', cluster.workdir]);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout.split('\n')[0]).toMatch(new RegExp(`^events of job ${jobId} `));
    // By name, as `status wordcount`; the ended job's empty log says why it is empty.
    const byName = await cluster.rebound(['events', 'wordcount', '--cluster', cluster.workdir]);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(new RegExp(`^events of job ${jobId} `));
    expect(byName.stdout).toContain('no events: the job ended FINISHED');
    const logs = await cluster.rebound(['logs', 'jm-1', '--job', prefix, '--cluster', cluster.workdir]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/INFO: /);
    const none = await cluster.rebound(['events', 'ffff0000', '--cluster', cluster.workdir]);
    expect([none.code, none.stderr]).toEqual([
      1,
      "rebound: no job id starts with ffff0000; run 'rebound list' to see the jobs\n",
    ]);
  });

  it('-m/--jobmanager HOST:PORT talks to that JobMaster, as --address does', async () => {
    const leader = JSON.parse((await cluster.rebound(['leader', '--json', '--cluster', cluster.workdir])).stdout) as {
      address: string;
    };
    const env = { REBOUND_AUTH_TOKEN_FILE: join(cluster.workdir, 'secret') };
    const viaM = await runRebound(['list', '-m', leader.address, '--json'], { env });
    expect(viaM.code, viaM.stderr).toBe(0);
    const viaAddress = await runRebound(['list', '--address', leader.address, '--json'], { env });
    expect(JSON.parse(viaM.stdout)).toEqual(JSON.parse(viaAddress.stdout));
    const viaLong = await runRebound(['list', '--jobmanager', leader.address, '--json'], { env });
    expect(viaLong.code, viaLong.stderr).toBe(0);
    expect(JSON.parse(viaLong.stdout)).toEqual(JSON.parse(viaAddress.stdout));
  });

  it('cancel, watch and results take an id prefix too, as their help says', async () => {
    for (const command of ['status', 'cancel', 'watch', 'results', 'events']) {
      const help = await runRebound([command, '--help']);
      expect([command, help.stdout.replace(/\s+/g, ' ')]).toEqual([
        command,
        expect.stringContaining('Arguments: job-id job id (or a unique prefix, or a job name)'),
      ]);
    }
    // A job that cannot end by itself: its readers wait for a gate file that never comes.
    const gated = await cluster.submit('test/fixtures/numbered.ts', [
      ...['--splits', '2', '--records', '10', '--output', join(data, 'gated-out')],
      ...['--gate', join(data, 'never')],
    ]);
    await cluster.waitForJob(gated.jobId, 30_000, ['RUNNING']);
    const cancel = await cluster.rebound(['cancel', gated.jobId.slice(0, 6)]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(new RegExp(`^job ${gated.jobId}: (CANCELING|CANCELED)\\n$`));
    await cluster.waitForJob(gated.jobId, 30_000, ['CANCELED']);

    const collected = await cluster.submit('test/fixtures/collect.ts', ['--mode', 'rows', '--count', '8'], {
      wait: true,
    });
    expect(collected.code, collected.stderr).toBe(0);
    const prefix = collected.jobId.slice(0, 6);
    const watched = await cluster.rebound(['watch', prefix, '--json']);
    expect(watched.code, watched.stderr).toBe(0);
    const last = JSON.parse(watched.stdout.trimEnd().split('\n').at(-1)!) as { jobId?: string; state?: string };
    expect(last).toMatchObject({ jobId: collected.jobId, state: 'FINISHED' });
    const byPrefix = await cluster.rebound([
      'results',
      prefix,
      '--cluster',
      cluster.workdir,
      '--output-format',
      'jsonl',
    ]);
    expect(byPrefix.code, byPrefix.stderr).toBe(0);
    const rows = byPrefix.stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { i: number }).i)
      .sort((a, b) => a - b);
    expect(rows).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('info takes the job arguments after the job file; usage errors exit 2 with one line', async () => {
    const plan = await runRebound(['info', 'examples/wordcount.ts', '--input', 'examples', '--output', '/tmp/x']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^Job wordcount \(examples\/wordcount\.ts\): 2 vertices, 1 edge; not run/);

    const typo = await runRebound(['submit', '-D', 'heartbeat.timout=5s', 'examples/wordcount.ts']);
    expect([typo.code, typo.stderr]).toEqual([
      2,
      "rebound: -D heartbeat.timout=5s: unknown configuration key 'heartbeat.timout' (did you mean 'heartbeat.timeout'?); see 'rebound config' for the known keys\n",
    ]);
    const help = await runRebound(['help', 'nosuch']);
    expect([help.code, help.stdout, help.stderr]).toEqual([
      2,
      '',
      "rebound: no command 'nosuch'; 'rebound help' lists the commands\n",
    ]);
    const env = await runRebound(['list', '--cluster', cluster.workdir], { env: { REBOUND_PROPERTIES: 'garbage' } });
    expect([env.code, env.stderr]).toEqual([
      2,
      "rebound: REBOUND_PROPERTIES line 1 'garbage': expected 'key: value'\n",
    ]);
  });

  it('local commands take --cluster like every other; --workdir stays accepted', async () => {
    for (const flag of ['--cluster', '--workdir']) {
      const r = await runRebound(['local', 'status', flag, cluster.workdir, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { workdir: string }).workdir).toBe(cluster.workdir);
    }
  });

  it('config hides the debug.* keys unless --all', async () => {
    const plain = await runRebound(['config']);
    expect(plain.stdout).not.toMatch(/^debug\./m);
    expect(plain.stdout).toMatch(/^\d+ debug\.\* keys \(crash points for tests\) are not shown; --all lists them\.$/m);
    expect((await runRebound(['config', '--all'])).stdout).toMatch(/^debug\.crash\.after-event /m);
  });
});
