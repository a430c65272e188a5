import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedJoinLines, expectedQ1Lines } from '@rebound/chaos';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { LocalCluster, suiteFailed, type TaskEvent } from './harness.js';
import { diffMaps, makeTempDir, readSinkLines, readSinkOutput } from './util.js';

/** Multiset difference of two line lists, for assertion messages (empty when equal). */
function diffLines(expected: readonly string[], actual: readonly string[], max = 10): string[] {
  const count = new Map<string, number>();
  for (const l of expected) count.set(l, (count.get(l) ?? 0) + 1);
  for (const l of actual) count.set(l, (count.get(l) ?? 0) - 1);
  const diffs = [...count]
    .filter(([, n]) => n !== 0)
    .map(([l, n]) => (n > 0 ? `missing ${n}x ${JSON.stringify(l)}` : `unexpected ${-n}x ${JSON.stringify(l)}`));
  return diffs.length > max ? [...diffs.slice(0, max), `... and ${diffs.length - max} more`] : diffs;
}

/** Attempts deployed and not (yet) finished, failed or canceled, per TaskManager. */
function runningAttempts(events: readonly TaskEvent[], jobId: string): TaskEvent[] {
  const open = new Map<string, TaskEvent>();
  for (const e of events) {
    if (e.jobId !== jobId) continue;
    const key = `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}`;
    if (e.event === 'task.deploy') open.set(key, e);
    else open.delete(key);
  }
  return [...open.values()];
}

async function listDir(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** Cluster foundation (issue 2): real jobs on real processes, TaskManager loss, cancel, CLI shapes. */
describe('cluster foundation', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    // One JobMaster: nothing here fails over the leader (foundation-failover.test.ts does).
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 3, slots: 2 });
    data = await makeTempDir('rebound-it-foundation-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('runs the join and the TPC-H Q1 examples to the results an independent computation gives', async () => {
    const joinOut = join(data, 'join');
    const q1Out = join(data, 'q1');
    // Side by side, as users would: the two jobs share the cluster's slots.
    const [joinRun, q1Run] = await Promise.all([
      cluster.submit(
        'examples/join.ts',
        ['--orders', '20000', '--customers', '2000', '--seed', '11', '--split-size', '5000', '--output', joinOut],
        { wait: true },
      ),
      cluster.submit(
        'examples/tpch-q1.ts',
        ['--rows', '60000', '--seed', '5', '--split-size', '10000', '--output', q1Out],
        { wait: true },
      ),
    ]);
    expect(joinRun.code, joinRun.stderr).toBe(0);
    expect(q1Run.code, q1Run.stderr).toBe(0);

    // Computed from the join's definition, not with the example's code.
    const joined = expectedJoinLines(20_000, 2_000, 11);
    // About one order in eleven has no customer: the inner join must drop those, not all or none.
    expect(joined.length).toBeGreaterThan(17_000);
    expect(joined.length).toBeLessThan(19_500);
    expect(diffLines(joined, await readSinkLines(joinOut))).toEqual([]);
    const joinStatus = await cluster.status(joinRun.jobId);
    expect(joinStatus.state).toBe('FINISHED');
    expect(joinStatus.vertices.map((v) => v.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Source: Orders/), expect.stringMatching(/^Source: Customers/)]),
    );

    // Computed from Q1's definition, not with the example's code.
    const q1 = expectedQ1Lines(60_000, 5);
    expect(q1).toHaveLength(4); // A|F, R|F, N|F, N|O
    expect(diffLines(q1, await readSinkLines(q1Out))).toEqual([]);
    const q1Status = await cluster.status(q1Run.jobId);
    const source = q1Status.vertices.find((v) => v.name.startsWith('Source'));
    expect(source?.parallelism).toBe(6); // one subtask per 10 000-row split
    expect(source?.recordsIn).toBe(60_000);
  });

  it('cancels a running job: CANCELED, its tasks canceled on the TaskManagers, nothing committed', async () => {
    const out = join(data, 'cancel');
    const vertexName = 'Source: Numbered -> Sink: TextFiles';
    // The sink runs in the source tasks, so they are writing (uncommitted) output when the cancel comes.
    // 2 minutes of work per task, ended by the cancel: at load 20-30, the four CLI calls before the
    // cancel outlasted the 20 s tasks this used to run.
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      '6',
      '--records',
      '2000',
      '--delay-ms',
      '60',
      '--direct',
      'true',
      '--output',
      out,
    ]);
    const running = await cluster.waitFor(
      async () => {
        const s = await cluster.status(jobId);
        return s.state === 'RUNNING' && s.vertices[0]!.tasks.running >= 2 ? s : undefined;
      },
      30_000,
      'the job to run at least two tasks',
    );
    expect(running.vertices[0]!.name).toBe(vertexName);
    await cluster.waitFor(
      async () => (await listDir(join(out, '.rebound-tmp', jobId))).length > 0,
      10_000,
      'the sinks to open their temporary files',
    );

    // `rebound status --json` of a running job.
    const st = await cluster.rebound(['status', jobId, '--json']);
    expect(st.code, st.stderr).toBe(0);
    const json = JSON.parse(st.stdout) as { vertices: { tasks: Record<string, number> }[] };
    expect(json).toMatchObject({
      jobId,
      name: 'numbered',
      state: 'RUNNING',
      vertices: [{ id: running.vertices[0]!.id, name: vertexName, parallelism: 6, state: 'RUNNING' }],
    });
    const tasks = json.vertices[0]!.tasks;
    expect(Object.keys(tasks).sort()).toEqual([
      'canceled',
      'created',
      'deploying',
      'failed',
      'finished',
      'running',
      'scheduled',
    ]);
    expect(tasks.running).toBeGreaterThanOrEqual(2);
    expect(tasks.finished).toBe(0);

    const c = await cluster.rebound(['cancel', jobId, '--json']);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toEqual({ jobId, state: 'CANCELED' });
    const final = await cluster.waitForJob(jobId, 10_000, ['CANCELED']);
    expect(final.vertices[0]).toMatchObject({ state: 'CANCELED', tasks: { running: 0, deploying: 0, finished: 0 } });

    const canceled = await cluster.waitFor(
      async () => {
        const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
        const cancels = events.filter((e) => e.event === 'task.cancel');
        return runningAttempts(events, jobId).length === 0 && cancels.length >= 2 ? cancels : undefined;
      },
      10_000,
      'every deployed task of the canceled job to be canceled in the TaskManager logs',
    );
    expect(canceled.every((e) => e.vertexName === vertexName)).toBe(true);
    expect((await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.event === 'task.finish')).toEqual([]);
    // Nothing committed: no part files, no _SUCCESS marker.
    expect((await listDir(out)).filter((n) => n.startsWith('part-') || n === '_SUCCESS')).toEqual([]);
    // The canceled tasks' slots are free again.
    await cluster.waitFor(
      async () => (await cluster.overview()).task_managers.every((t) => t.slots_free === t.slots_total),
      10_000,
      'every slot to be free after the cancel',
    );
  });

  it('list --json and status --json of finished jobs', async () => {
    const r = await cluster.rebound(['list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const list = JSON.parse(r.stdout) as { jobs: Record<string, unknown>[] };
    expect(list.jobs.map((j) => [j.name, j.state]).sort()).toEqual([
      ['join', 'FINISHED'],
      ['numbered', 'CANCELED'],
      ['tpch-q1', 'FINISHED'],
    ]);
    for (const j of list.jobs) {
      expect(j).toEqual({
        jobId: expect.stringMatching(/^[0-9a-f]{32}$/),
        name: expect.any(String),
        state: expect.any(String),
        submittedAtMs: expect.any(Number),
        finishedAtMs: expect.any(Number),
        tasksTotal: expect.any(Number),
        tasksFinished: expect.any(Number),
      });
      expect(j.finishedAtMs as number).toBeGreaterThanOrEqual(j.submittedAtMs as number);
    }
    const q1 = list.jobs.find((j) => j.name === 'tpch-q1')!;
    // What `rebound status --json` prints (the CLI form is checked on a running job above).
    const status = await cluster.status(String(q1.jobId));
    expect(status).toMatchObject({ jobId: q1.jobId, name: 'tpch-q1', state: 'FINISHED' });
    const total = status.vertices.reduce((n, v) => n + v.parallelism, 0);
    // A finished job lists the tasks it ran, not 0/0.
    expect(q1).toMatchObject({ tasksTotal: total, tasksFinished: total });
    for (const v of status.vertices) {
      expect(v).toMatchObject({ id: expect.any(String), name: expect.any(String), state: 'FINISHED' });
      expect(v.parallelism).toBeGreaterThan(0);
      expect(v.tasks).toEqual({
        created: 0,
        scheduled: 0,
        deploying: 0,
        running: 0,
        finished: v.parallelism,
        failed: 0,
        canceled: 0,
      });
    }
  });

  // Last: it leaves the cluster with a replaced TaskManager.
  it('finishes a job correctly when a TaskManager running its tasks is SIGKILLed; a replacement joins', async () => {
    const out = join(data, 'tm-kill');
    const splits = 12;
    const records = 40;
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--delay-ms',
      '20',
      '--parallelism',
      '4',
      '--output',
      out,
    ]);
    // While the sources run, the adaptive consumer is not initialized: no parallelism decided yet.
    const before = await cluster.waitFor(
      async () => {
        const s = await cluster.status(jobId);
        return s.vertices[0]!.tasks.running > 0 ? s : undefined;
      },
      30_000,
      'the sources to run',
    );
    expect(before.vertices[1]).toMatchObject({
      name: 'Reduce -> Sink: TextFiles',
      parallelism: 0,
      state: 'CREATED',
      parallelismDecidedAdaptively: false,
    });
    // A TaskManager that runs a source task of the job.
    const victim = await cluster.waitFor(
      async () => {
        const open = runningAttempts(await cluster.taskEvents(), jobId);
        return open.length >= 3 ? open[0]!.taskManagerId : undefined;
      },
      30_000,
      'source tasks of the job to run',
    );
    const killedAt = Date.now();
    await cluster.kill(victim, 'SIGKILL');
    const replacement = await cluster.startTaskManager();
    expect(replacement.id).not.toBe(victim);

    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedNumbered(splits, records), await readSinkOutput(out, String))).toEqual([]);
    expect(final.restarts).toBeGreaterThanOrEqual(1);
    const overview = await cluster.overview();
    const registered = overview.task_managers.map((t) => t.task_manager_id);
    expect(registered).toContain(replacement.id);
    expect(registered).not.toContain(victim);
    // What ran on the dead TaskManager ran again elsewhere, under a new attempt.
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
    const rerun = events.filter((e) => e.event === 'task.deploy' && e.attempt > 0 && e.time >= killedAt);
    expect(rerun.length).toBeGreaterThanOrEqual(1);
    expect(rerun.every((e) => e.taskManagerId !== victim)).toBe(true);
  });
});
