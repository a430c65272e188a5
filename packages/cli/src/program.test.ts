import { JobNotFoundError } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';
import { runCli } from './program.js';

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
  calls: { name: keyof CommandHandlers; opts: unknown }[];
}

/** Runs the parser with recording handlers: what each command would be called with. */
async function parse(argv: string[], result = 0): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: {},
    cwd: '/work',
  };
  const calls: Captured['calls'] = [];
  const handlers = new Proxy({} as CommandHandlers, {
    get: (_t, name) => (opts: unknown) => {
      calls.push({ name: name as keyof CommandHandlers, opts });
      return Promise.resolve(result);
    },
  });
  const code = await runCli(argv, io, handlers);
  return { code, stdout, stderr, calls };
}

describe('rebound argument parsing', () => {
  it('submit: job args after --, repeated -D, flags', async () => {
    const r = await parse([
      'submit',
      'examples/wordcount.ts',
      '--detached',
      '-D',
      'rpc.timeout=3 s',
      '-Dheartbeat.interval=1s',
      '--',
      '--input',
      'in/',
      '--output',
      'out/',
    ]);
    expect(r.code).toBe(0);
    expect(r.calls).toEqual([
      {
        name: 'submit',
        opts: {
          jobFile: 'examples/wordcount.ts',
          jobArgs: ['--input', 'in/', '--output', 'out/'],
          detached: true,
          json: false,
          dynamic: ['rpc.timeout=3 s', 'heartbeat.interval=1s'],
          pollIntervalMs: 500,
        },
      },
    ]);
  });

  it('submit: cluster target options', async () => {
    const r = await parse(['submit', '--json', '--ha-dir', '/ha', '--address', 'h:1', '--cluster', 'c', 'job.ts']);
    expect(r.calls[0]?.opts).toMatchObject({ haDir: '/ha', address: 'h:1', cluster: 'c', json: true, jobArgs: [] });
  });

  it('jobmaster and taskmanager daemons', async () => {
    const jm = await parse([
      'jobmaster',
      '--ha-dir',
      '/ha',
      '--id',
      'jm-1',
      '--log-file',
      'x.log',
      '-D',
      'rpc.timeout=1 s',
    ]);
    expect(jm.calls[0]).toEqual({
      name: 'jobmaster',
      opts: { haDir: '/ha', id: 'jm-1', logFile: 'x.log', dynamic: ['rpc.timeout=1 s'], shutdownTimeoutMs: 30_000 },
    });
    const tm = await parse([
      'taskmanager',
      '--ha-dir',
      '/ha',
      '--slots',
      '4',
      '--data-dir',
      '/d',
      '--config',
      'c.yaml',
    ]);
    expect(tm.calls[0]).toEqual({
      name: 'taskmanager',
      opts: { haDir: '/ha', slots: 4, dataDir: '/d', configFile: 'c.yaml', dynamic: [], shutdownTimeoutMs: 30_000 },
    });
  });

  it('shuffle-worker daemon', async () => {
    const sw = await parse([
      'shuffle-worker',
      '--ha-dir',
      '/ha',
      '--data-dir',
      '/d',
      '--id',
      'sw-1',
      '-D',
      'shuffle-worker.port=7000',
      '--shutdown-timeout',
      '5 s',
    ]);
    expect(sw.calls[0]).toEqual({
      name: 'shuffleWorker',
      opts: {
        haDir: '/ha',
        dataDir: '/d',
        id: 'sw-1',
        dynamic: ['shuffle-worker.port=7000'],
        shutdownTimeoutMs: 5_000,
      },
    });
    expect((await parse(['shuffle-worker', '--ha-dir', '/ha', '--data-dir', '/d'])).calls[0]?.opts).toEqual({
      haDir: '/ha',
      dataDir: '/d',
      dynamic: [],
      shutdownTimeoutMs: 30_000,
    });
  });

  it('local up defaults and overrides', async () => {
    const d = await parse(['local', 'up']);
    expect(d.calls[0]).toEqual({
      name: 'localUp',
      opts: {
        workdir: '.rebound',
        jobmasters: 2,
        taskmanagers: 3,
        shuffleWorkers: 0,
        slots: 2,
        dynamic: [],
        timeoutMs: 60_000,
        json: false,
      },
    });
    const o = await parse([
      'local',
      'up',
      '--workdir',
      'w',
      '--jobmasters',
      '1',
      '--taskmanagers',
      '0',
      '--slots',
      '3',
      '--shuffle-workers',
      '2',
      '-D',
      'rpc.timeout=1 s',
      '--timeout',
      '5 s',
    ]);
    expect(o.calls[0]?.opts).toMatchObject({
      workdir: 'w',
      jobmasters: 1,
      taskmanagers: 0,
      shuffleWorkers: 2,
      slots: 3,
      dynamic: ['rpc.timeout=1 s'],
      timeoutMs: 5_000,
    });
  });

  it('local sub-commands', async () => {
    expect((await parse(['local', 'down', '--workdir', 'w'])).calls[0]).toEqual({
      name: 'localDown',
      opts: { workdir: 'w', timeoutMs: 10_000, json: false },
    });
    expect((await parse(['local', 'status', '--json'])).calls[0]).toEqual({
      name: 'localStatus',
      opts: { workdir: '.rebound', json: true },
    });
    expect((await parse(['local', 'kill-leader'])).calls[0]).toEqual({
      name: 'localKillLeader',
      opts: { workdir: '.rebound', json: false, wait: true },
    });
    expect((await parse(['local', 'kill-leader', '--wait', '10s'])).calls[0]?.opts).toMatchObject({
      wait: true,
      waitMs: 10_000,
    });
    expect((await parse(['local', 'kill-leader', '--no-wait'])).calls[0]?.opts).toEqual({
      workdir: '.rebound',
      json: false,
      wait: false,
    });
    expect((await parse(['local', 'kill-leader', '--wait', 'soon'])).code).toBe(2);
    expect((await parse(['local', 'start-jobmaster', '--id', 'jm-1'])).calls[0]?.opts).toMatchObject({
      id: 'jm-1',
      dynamic: [],
    });
    expect((await parse(['local', 'start-taskmanager', '--no-wait', '--slots', '1'])).calls[0]?.opts).toMatchObject({
      slots: 1,
      waitRegistered: false,
    });
    expect((await parse(['local', 'start-taskmanager'])).calls[0]?.opts).toMatchObject({ waitRegistered: true });
    expect((await parse(['local', 'start-shuffle-worker'])).calls[0]).toEqual({
      name: 'localStartShuffleWorker',
      opts: { workdir: '.rebound', waitRegistered: true, dynamic: [], timeoutMs: 60_000, json: false },
    });
    expect(
      (await parse(['local', 'start-shuffle-worker', '--id', 'sw-2', '--no-wait', '--cluster', 'w', '--json'])).calls[0]
        ?.opts,
    ).toEqual({ workdir: 'w', id: 'sw-2', waitRegistered: false, dynamic: [], timeoutMs: 60_000, json: true });
  });

  it('read commands take --json', async () => {
    for (const argv of [
      ['list'],
      ['status', 'abcd'],
      ['cancel', 'abcd'],
      ['watch', 'abcd'],
      ['events', 'abcd'],
      ['config'],
    ]) {
      const r = await parse([...argv, '--json']);
      expect(r.code).toBe(0);
      expect(r.calls[0]?.opts).toMatchObject({ json: true });
    }
  });

  it('passes the handler exit code through', async () => {
    expect((await parse(['list'], 1)).code).toBe(1);
  });

  it('usage errors: one line on stderr, exit 2, no handler called', async () => {
    for (const argv of [
      ['submit'],
      ['taskmanager', '--ha-dir', '/ha', '--slots', 'x', '--data-dir', '/d'],
      ['shuffle-worker', '--ha-dir', '/ha'],
      ['shuffle-worker', '--ha-dir', '/ha', '--data-dir', '/d', '--slots', '2'],
      ['local', 'up', '--shuffle-workers', 'two'],
      ['local', 'up', '--shuffle-workers', '-1'],
      ['local', 'start-shuffle-worker', '--slots', '2'],
      ['list', '--nope'],
      ['frobnicate'],
      ['status', 'a', 'b'],
    ]) {
      const r = await parse(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.calls).toEqual([]);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^rebound: /);
    }
  });

  it('--help prints usage and exits 0', async () => {
    const r = await parse(['submit', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: rebound submit');
    expect(r.calls).toEqual([]);
  });

  it('Flink-style flags: submit -d -p, list -r, info, logs, config --cluster', async () => {
    const submit = await parse(['submit', 'job.ts', '-d', '-p', '4', '--', '--x']);
    expect(submit.calls[0]?.opts).toMatchObject({ detached: true, parallelism: 4, jobArgs: ['--x'] });
    expect((await parse(['list', '-r'])).calls[0]?.opts).toMatchObject({ running: true });
    expect((await parse(['list', '--all'])).calls[0]?.opts).toMatchObject({ running: false });
    expect((await parse(['info', 'job.ts', '-p', '2', '--json', '--', '--input', 'in'])).calls[0]).toEqual({
      name: 'info',
      opts: { jobFile: 'job.ts', jobArgs: ['--input', 'in'], json: true, dynamic: [], parallelism: 2 },
    });
    expect((await parse(['logs', 'tm-1', '-f', '--level', 'warn'])).calls[0]).toEqual({
      name: 'logs',
      opts: { workdir: '.rebound', follow: true, level: 'warn', json: false, id: 'tm-1' },
    });
    expect((await parse(['logs', '--job', '8A8B'])).calls[0]?.opts).toMatchObject({ jobId: '8A8B' });
    const byName = await parse(['logs', '--job', 'wordcount']);
    expect(byName.code).toBe(2);
    expect(byName.calls).toEqual([]);
    expect(byName.stderr).toContain("'wordcount' is not a job id or a prefix of one");
    expect((await parse(['config', '--cluster'])).calls[0]?.opts).toEqual({ json: false, cluster: '.rebound' });
    expect((await parse(['config', '--cluster', 'w'])).calls[0]?.opts).toEqual({ json: false, cluster: 'w' });
    expect((await parse(['config'])).calls[0]?.opts).toEqual({ json: false });
  });

  it('help shows durations with their unit', async () => {
    const r = await parse(['local', 'up', '--help']);
    expect(r.stdout).toContain('(default: 1 min)');
    expect((await parse(['watch', '--help'])).stdout).toContain('(default: 500 ms)');
    expect(r.stdout).not.toMatch(/default: \d{4,}\)/);
  });

  it('with --json, errors are one JSON object on stderr with the code', async () => {
    const usage = await parse(['list', '-r', '-a', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      error: { code: 'USAGE', message: expect.stringContaining("cannot be used with option '-a, --all'"), exitCode: 2 },
    });
    const io = { stdout: { write: () => true }, stderr: { write: (t: string) => (err += t) }, env: {}, cwd: '/' };
    let err = '';
    const handlers = new Proxy({} as CommandHandlers, {
      get: () => () => Promise.reject(new JobNotFoundError('abcd')),
    });
    expect(await runCli(['status', 'abcd', '--json'], io, handlers)).toBe(1);
    expect(JSON.parse(err)).toMatchObject({ error: { code: 'JOB_NOT_FOUND', exitCode: 1 } });
    err = '';
    // `--json` after `--` belongs to the job, not to rebound.
    expect(await runCli(['submit', 'job.ts', '--', '--json'], io, handlers)).toBe(1);
    expect(err).toMatch(/^rebound: /);
  });

  it('no command: help on stderr, exit 2', async () => {
    const r = await parse([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: rebound');
  });
});
