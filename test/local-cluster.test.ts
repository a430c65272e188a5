import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { LocalCluster, suiteFailed } from './harness.js';
import { holdPort, httpPortsOf, portTakenLine } from './local-up-output.js';
import { HISTOGRAM_JOB, expectedHistogram, histogramArgs, readEventLog } from './recovery-util.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

/** The harness and `rebound local` / `submit` / `watch` / `status` against real processes. */
describe('LocalCluster', () => {
  let cluster: LocalCluster;
  let data: string;
  /** The port jm-1 wanted and another program held while `local up` ran (8081, when it was free). */
  let blocked: number;

  beforeAll(async () => {
    const held = await holdPort(8081);
    blocked = held.port;
    try {
      cluster = await LocalCluster.start({
        jobmasters: 2,
        taskmanagers: 2,
        slots: 2,
        config: {
          'execution.batch.job-recovery.enabled': 'true',
          ...(blocked === 8081 ? {} : { 'rest.port': String(blocked) }),
        },
      });
    } finally {
      await held.close();
    }
    data = await makeTempDir('rebound-it-data-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('comes up with a leader and every TaskManager registered', async () => {
    const r = await cluster.rebound(['local', 'status', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      leader: { epoch: number; jobmasterId: string };
      processes: { id: string; alive: boolean; registered?: boolean; leader: boolean }[];
    };
    expect(s.leader.epoch).toBeGreaterThan(0);
    expect(s.processes.map((p) => p.id).sort()).toEqual(['jm-1', 'jm-2', 'tm-1', 'tm-2']);
    expect(s.processes.every((p) => p.alive)).toBe(true);
    expect(
      s.processes
        .filter((p) => p.registered)
        .map((p) => p.id)
        .sort(),
    ).toEqual(['tm-1', 'tm-2']);
    expect(s.processes.find((p) => p.leader)?.id).toBe(s.leader.jobmasterId);
    expect((await cluster.overview()).task_managers).toHaveLength(2);
  });

  it('local up says recovery is on, and moves a JobMaster off a taken port with a line saying so', async () => {
    const lines = cluster.upOutput.split('\n');
    expect(lines).toContain(
      '  recovery   batch job recovery is on: after a leader kill, jobs go on from the vertices that had finished (FLIP-383)',
    );
    expect(lines).toContain(portTakenLine('jm-1', blocked));
    const ports = httpPortsOf(cluster.upOutput);
    expect(ports.get('jm-1')).not.toBe(blocked);
    // jm-2 gets the next port, unless something holds that one too (then its own line says so).
    const next = lines.includes(portTakenLine('jm-2', blocked + 1));
    expect(ports.get('jm-2') === blocked + 1).toBe(!next);
    // The HTTP column is where each REST API answers, with the cluster secret.
    for (const id of ['jm-1', 'jm-2']) {
      const res = await fetch(`http://127.0.0.1:${ports.get(id)}/config`, {
        headers: cluster.security().httpHeaders(),
        signal: AbortSignal.timeout(10_000),
      });
      expect([id, res.status]).toEqual([id, 200]);
    }
  });

  it('runs wordcount to FINISHED with the right output', async () => {
    const files = await generateTextFiles(join(data, 'in1'), { files: 3, linesPerFile: 200, seed: 1 });
    const out = join(data, 'out1');
    const r = await cluster.submit('examples/wordcount.ts', ['--input', join(data, 'in1'), '--output', out], {
      wait: true,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    const status = await cluster.status(r.jobId);
    expect(status.state).toBe('FINISHED');
    expect(status.vertices.every((v) => v.tasks.finished === v.parallelism)).toBe(true);
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === r.jobId);
    const finished = events.filter((e) => e.event === 'task.finish').length;
    expect(finished).toBe(status.vertices.reduce((n, v) => n + v.parallelism, 0));
    expect(events.filter((e) => e.event === 'task.deploy').length).toBeGreaterThanOrEqual(finished);

    const human = await cluster.rebound(['status', r.jobId]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/VERTEX\s+PARALLELISM\s+STATE\s+TASKS\s+BYTES CONSUMED/);
    const list = await cluster.rebound(['list', '--json']);
    expect((JSON.parse(list.stdout) as { jobs: { jobId: string }[] }).jobs.map((j) => j.jobId)).toContain(r.jobId);
  });

  it('finishes a job whose leader is SIGKILLed mid-job, and watch follows the new leader', async () => {
    const out = join(data, 'out2');
    // The job runs until the test opens the gate: still running when `local kill-leader` comes,
    // however long spawning it takes on a loaded machine, and while watch sees the new leader.
    const gate = join(data, 'gate2');
    const splits = 4;
    const records = 50;
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--parallelism',
      '2',
      '--gate',
      gate,
      '--output',
      out,
    ]);
    let watched = '';
    const watching = cluster.rebound(['watch', jobId, '--poll-interval', '100 ms'], {
      onStdout: (d) => (watched += d),
    });
    let killed;
    try {
      // Watch has seen the job run under the first leader: it must now notice the change.
      await cluster.waitFor(() => watched.includes(`job ${jobId} RUNNING`), 60_000, 'watch to show the job running');
      killed = await cluster.killLeader();
      expect(await cluster.isAlive(killed.id)).toBe(false);
      await cluster.waitFor(
        () => /leader changed: epoch \d+ at 127\.0\.0\.1:\d+/.test(watched),
        60_000,
        'watch to report the new leader',
      );
    } finally {
      // Also on failure: a job held at the gate would keep the slots from the next test.
      await writeFile(gate, '');
    }
    const final = await cluster.waitForJob(jobId, 120_000);
    expect(final.leaderEpoch).toBeGreaterThan(killed.epoch);
    expect(diffMaps(expectedNumbered(splits, records), await readSinkOutput(out, String))).toEqual([]);
    const w = await watching;
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/leader changed: epoch \d+ at 127\.0\.0\.1:\d+/);
    expect(w.stdout).toContain(`job ${jobId} FINISHED`);

    // The killed JobMaster comes back as a standby under its own id.
    const restarted = await cluster.startJobMaster({ id: killed.id });
    expect(restarted.pid).not.toBe(killed.pid);
    expect(await cluster.isAlive(killed.id)).toBe(true);
  });

  it('local kill-leader names the killed leader, then who took over at which epoch and when, as the HA services say', async () => {
    const takeover = (line: string): number => {
      const m = / (\d+(?:\.\d)?) (ms|s) after the kill$/.exec(line);
      expect(m, line).not.toBeNull();
      return Number(m![1]) * (m![2] === 's' ? 1_000 : 1);
    };
    const before = (await cluster.leader())!;
    const standby = (await cluster.processes()).find((p) => p.role === 'jobmaster' && p.id !== before.jobmasterId)!;
    const pidOf = async (id: string): Promise<number> => (await cluster.process(id)).pid;
    const killedLine = (l: { jobmasterId: string; epoch: number }, pid: number): string =>
      `killed leader ${l.jobmasterId} (epoch ${l.epoch}, pid ${pid}) with SIGKILL`;

    // With the standby frozen nobody takes over: the bounded wait ends with one error line.
    const firstPid = await pidOf(before.jobmasterId);
    await cluster.kill(standby.id, 'SIGSTOP');
    let timedOut;
    let again;
    try {
      timedOut = await cluster.rebound(['local', 'kill-leader', '--wait', '1500ms']);
      // The HA services still name the dead leader: there is no leader to kill.
      again = await cluster.rebound(['local', 'kill-leader']);
    } finally {
      await cluster.kill(standby.id, 'SIGCONT');
    }
    expect(timedOut.code, timedOut.stderr).toBe(1);
    expect(timedOut.stdout).toBe(`${killedLine(before, firstPid)}\n`);
    expect(timedOut.stderr).toBe(
      `rebound: no JobMaster took over within 1.5 s of the kill (the HA services still name ${before.jobmasterId}, epoch ${before.epoch}); see 'rebound local status --cluster ${cluster.workdir}' and the JobMaster logs\n`,
    );
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(
      new RegExp(
        `^rebound: no leader to kill: the HA services name ${before.jobmasterId} \\(pid ${firstPid}, epoch ${before.epoch}\\), which is not running;`,
      ),
    );
    const resumed = await cluster.waitFor(
      async () => {
        const l = await cluster.leader();
        return l && l.epoch > before.epoch ? l : undefined;
      },
      60_000,
      'the resumed standby to take over',
    );
    await cluster.startJobMaster({ id: before.jobmasterId });

    // The default: wait for the takeover, then say who leads at which epoch, and how long it took.
    const pid = await pidOf(resumed.jobmasterId);
    const startedAt = Date.now();
    const r = await cluster.rebound(['local', 'kill-leader']);
    const elapsed = Date.now() - startedAt;
    expect(r.code, r.stderr).toBe(0);
    const next = (await cluster.leader())!;
    expect(next.jobmasterId).toBe(before.jobmasterId);
    expect(next.epoch).toBeGreaterThan(resumed.epoch);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(killedLine(resumed, pid));
    expect(lines[1]).toMatch(
      new RegExp(`^${next.jobmasterId} leads at epoch ${next.epoch} \\(${next.address.replace(/\./g, '\\.')}\\), \\d`),
    );
    expect(takeover(lines[1]!)).toBeLessThanOrEqual(elapsed);
    await cluster.startJobMaster({ id: resumed.jobmasterId });

    // --json: the same, with the takeover exactly as the new leader's election time says.
    const j = await cluster.killLeader({ waitMs: 60_000 });
    const after = (await cluster.leader())!;
    expect(j).toMatchObject({ id: next.jobmasterId, epoch: next.epoch, address: next.address, signal: 'SIGKILL' });
    expect(j.next).toEqual({
      id: after.jobmasterId,
      epoch: after.epoch,
      address: after.address,
      takeoverMs: after.electedAtMs - j.killedAtMs,
    });

    // The last JobMaster: nobody can take over, so it does not wait for anyone.
    const lastPid = await pidOf(after.jobmasterId);
    const last = await cluster.rebound(['local', 'kill-leader']);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout).toBe(
      `${killedLine(after, lastPid)}\nno other JobMaster runs, so none takes over; start one with 'rebound local start-jobmaster --cluster ${cluster.workdir}'\n`,
    );
    await cluster.startJobMaster({ id: j.id });
    await cluster.startJobMaster({ id: after.jobmasterId });
  });

  it('rebound events prints the event log of a running job from the HA directory, and nothing once it is cleared', async () => {
    const out = join(data, 'out3');
    const records = 2000;
    const keys = 97;
    // One slow split (20 batches of 500 ms): the job runs for a while with finished events logged.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, slowSplitDelayMs: 500 }),
    );
    await cluster.waitFor(
      async () =>
        (await readEventLog(cluster, jobId)).events.filter((e) => e.type === 'ExecutionVertexFinished').length >= 2,
      60_000,
      'two finished events in the log',
    );
    // Every JobMaster is frozen, so the log cannot change (or be cleared) while the CLI reads it:
    // `rebound events` needs no JobMaster, it reads the files in the HA directory.
    const frozen: string[] = [];
    for (const p of await cluster.processes()) {
      if (p.role !== 'jobmaster' || !(await cluster.isAlive(p.id))) continue;
      await cluster.kill(p.id, 'SIGSTOP');
      frozen.push(p.id);
    }
    let logged;
    let r;
    try {
      logged = await readEventLog(cluster, jobId);
      r = await cluster.rebound(['events', jobId]);
    } finally {
      for (const id of frozen) await cluster.kill(id, 'SIGCONT');
    }
    expect(r.code, r.stderr).toBe(0);
    // Every record read straight from the files is printed, with its file, offset and content.
    for (const e of logged.events) {
      const at = `${e.file}:${e.offset}`;
      const line = r.stdout.split('\n').find((l) => l.startsWith(`${at} `));
      expect(line, `a line for ${at} in:\n${r.stdout}`).toBeDefined();
      expect(line).toContain(e.type);
      if (e.type === 'ExecutionVertexFinished')
        expect(line).toContain(`${e.event.vertex_id}#${e.event.subtask} attempt ${e.event.attempt}`);
    }
    expect(r.stdout).toMatch(new RegExp(`^events:\\s+${logged.events.length} \\(`, 'm'));

    // The job still finishes correctly (perhaps under a new leader: the frozen one's lease may have expired).
    await cluster.waitForJob(jobId, 120_000);
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
    // A globally terminal job's log is cleared: the dump says so instead of printing stale events.
    // (It is removed as the job ends, not necessarily before its status says FINISHED.)
    const after = await cluster.waitFor(
      async () => {
        const e = await cluster.rebound(['events', jobId]);
        return e.code === 0 && e.stdout.includes('(no job events in') ? e : undefined;
      },
      30_000,
      'rebound events to find the log cleared',
    );
    expect(after.stdout).toMatch(/^events:\s+0 /m);
  });
});
