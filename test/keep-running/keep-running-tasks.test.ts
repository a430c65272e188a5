import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from '../harness.js';
import {
  WORDCOUNT_JOB,
  deploymentsAfter,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  killAllJobMasters,
  killLeader,
  readEventLog,
  waitForLog,
  redeployedSubtasks,
  resumeStandbys,
  subtaskKey,
  waitForNewLeader,
} from '../recovery-util.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkLines, readSinkOutput } from '../util.js';

/**
 * Issue 21: with execution.batch.job-recovery.keep-running-tasks the TaskManagers keep running
 * tasks through a JobMaster failover and the next leader adopts them in place. Every source
 * subtask is still running when the leader dies; the test reads which subtasks the TaskManagers
 * were asked to run again from their task.deploy log lines, and the output against an oracle.
 */
describe('running tasks survive a JobMaster failover (keep-running-tasks)', () => {
  let cluster: LocalCluster;
  let data: string;
  let files: string[];
  const SOURCES = 4;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '20 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.registration.timeout': '2 min',
      },
    });
    data = await makeTempDir('rebound-it-keep-running-');
    // 8 files (splits) of 300 lines at 5 ms a line: each of the 4 readers reads two, one after the other.
    files = await generateTextFiles(join(data, 'in'), { files: 8, linesPerFile: 300, seed: 21 });
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function submit(out: string, keepRunning: boolean) {
    const { jobId } = await cluster.submit(
      WORDCOUNT_JOB,
      ['--input', join(data, 'in'), '--output', out, '--record-delay-ms', '5', '--parallelism', String(SOURCES)],
      { config: { 'execution.batch.job-recovery.keep-running-tasks': String(keepRunning) } },
    );
    const s = await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        return st.vertices.length === 2 && st.vertices[0]!.parallelism > 0 ? st : undefined;
      },
      60_000,
      'the job to start',
    );
    const source = s.vertices[0]!;
    expect(source.parallelism).toBe(SOURCES);
    await cluster.waitFor(
      async () =>
        (await cluster.taskEvents()).filter(
          (e) => e.jobId === jobId && e.event === 'task.deploy' && e.vertexId === source.id,
        ).length === SOURCES,
      60_000,
      'every source subtask deployed',
    );
    return { jobId, sourceId: source.id };
  }

  /** Whether some TaskManager logged a task waiting for a leader to answer it (a split request). */
  async function aTaskAwaitsALeader(jobId: string): Promise<boolean> {
    for (const p of await cluster.processes()) {
      if (p.role !== 'taskmanager') continue;
      for (const line of (await cluster.log(p.id)).split('\n')) {
        if (line.includes('"task.await-leader"') && line.includes(jobId)) return true;
      }
    }
    return false;
  }

  it('adopts every running source subtask: none is redeployed, a split asked for without a leader comes from the next one, output exact', async () => {
    const out = join(data, 'out-keep');
    const { jobId, sourceId } = await submit(out, true);
    // No leader at all: the standby is frozen, the leader killed.
    const { killed, frozen } = await killAllJobMasters(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(finishedOf(atKill, sourceId)).toHaveLength(0);
    // (d) a reader finishes its first split and asks for the next one while there is no leader.
    await cluster.waitFor(() => aTaskAwaitsALeader(jobId), 60_000, 'a reader to wait for a leader');
    await resumeStandbys(cluster, frozen);
    const final = await cluster.waitForJob(jobId, 180_000);
    const restarted = cluster.startJobMaster({ id: killed.id });
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch).filter(
      (e) => e.vertexId === sourceId,
    );
    expect(redeployedSubtasks(redeployed)).toEqual([]);
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      restartedFromScratch: false,
      runningTasksAdopted: SOURCES,
      executionsReset: 0,
    });
    await restarted;
  });

  it('a leader paused past its lease and resumed: the adopted tasks answer only to the new epoch', async () => {
    const out = join(data, 'out-paused');
    const { jobId, sourceId } = await submit(out, true);
    const paused = (await cluster.leader())!;
    await cluster.kill(paused.jobmasterId, 'SIGSTOP');
    let final;
    try {
      const next = await waitForNewLeader(cluster, paused.epoch);
      // The new leader adopted the readers: now the old one wakes up, with calls in flight.
      await cluster.waitFor(
        async () => firstRecoveryAfter((await cluster.status(jobId)).recoveries, paused.epoch),
        60_000,
        'the new leader to reconcile',
      );
      await cluster.kill(paused.jobmasterId, 'SIGCONT');
      final = await cluster.waitForJob(jobId, 180_000);
      expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
      const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, paused.epoch);
      expect(redeployedSubtasks(redeployed.filter((e) => e.vertexId === sourceId))).toEqual([]);
      expect(redeployed.every((e) => (e.epoch ?? 0) >= next.epoch)).toBe(true);
      expect(firstRecoveryAfter(final.recoveries, paused.epoch)).toMatchObject({ runningTasksAdopted: SOURCES });
    } finally {
      await cluster.kill(paused.jobmasterId, 'SIGKILL');
    }
    await cluster.startJobMaster({ id: paused.jobmasterId });
  });

  /** Whether JobMaster `jmId` logged that the job entered RECONCILING as the leader of `epoch`. */
  async function reconciling(jmId: string, jobId: string, epoch: number): Promise<boolean> {
    return (await cluster.log(jmId))
      .split('\n')
      .some((l) => l.includes('job enters RECONCILING') && l.includes(jobId) && l.includes(`"epoch":${epoch}`));
  }

  it('(b) a leader killed, then its successor killed while RECONCILING: the third adopts every reader, output exact', async () => {
    const out = join(data, 'out-twice');
    const { jobId, sourceId } = await submit(out, true);
    const deploys = (await cluster.taskEvents()).filter(
      (e) => e.jobId === jobId && e.event === 'task.deploy' && e.vertexId === sourceId,
    );
    // A frozen TaskManager keeps the second leader RECONCILING (its endpoint names a live
    // process, so the reconnect wait waits for it): the window in which that leader is killed.
    const frozenTm = deploys[0]!.taskManagerId;
    await cluster.kill(frozenTm, 'SIGSTOP');
    let first: { id: string; epoch: number };
    // The JobMaster killed second is started again, also when the test fails: the next tests need two.
    let killedSecond: string | undefined;
    let restarted: Promise<unknown> | undefined;
    try {
      first = await killLeader(cluster);
      await cluster.startJobMaster({ id: first.id });
      const second = await waitForNewLeader(cluster, first.epoch);
      await cluster.waitFor(
        () => reconciling(second.id, jobId, second.epoch),
        60_000,
        'the second leader to reconcile',
      );
      await cluster.kill(second.id, 'SIGKILL');
      killedSecond = second.id;
      const third = await waitForNewLeader(cluster, second.epoch);
      // Not always the standby of the first kill: on a loaded machine the restarted first
      // JobMaster can win the lease before it, and is then the second leader.
      expect(third.id).not.toBe(second.id);
      await cluster.kill(frozenTm, 'SIGCONT');
      const final = await cluster.waitForJob(jobId, 180_000);
      restarted = cluster.startJobMaster({ id: second.id });
      expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
      // No reader ran again: the third leader adopted those still running and recorded those
      // that finished meanwhile (also under the second leader, which never decided).
      const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, first.epoch).filter(
        (e) => e.vertexId === sourceId,
      );
      expect(redeployedSubtasks(redeployed)).toEqual([]);
      const report = firstRecoveryAfter(final.recoveries, second.epoch);
      expect(report).toMatchObject({ restartedFromScratch: false, executionsReset: 0 });
      expect((report?.runningTasksAdopted ?? 0) + (report?.finishedTasksReported ?? 0)).toBe(SOURCES);
    } finally {
      await cluster.kill(frozenTm, 'SIGCONT').catch(() => undefined);
      if (killedSecond) await (restarted ?? cluster.startJobMaster({ id: killedSecond }));
    }
  });

  it('(e) a user coordinator through a failover: its running subtasks are kept, ids unique and none missing', async () => {
    // examples/unique-ids.ts: the coordinator hands out blocks of ids. A running subtask may hold
    // a block it got after the newest snapshot; the TaskManager reports every block the attempt
    // got, and the restored coordinator takes them in (subtaskAdopted) before handing out more.
    const dir = join(data, 'ids-in');
    const lines: string[] = [];
    for (const [i, n] of [10, 20, 60, 90, 120, 150].entries()) {
      const [path] = await generateTextFiles(dir, { files: 1, linesPerFile: n, seed: 200 + i, prefix: `f${i}` });
      lines.push(...(await readFile(path!, 'utf8')).replace(/\n$/, '').split('\n'));
    }
    const out = join(data, 'ids-out');
    const { jobId } = await cluster.submit(
      'examples/unique-ids.ts',
      ['--input', dir, '--output', out, '--block-size', '5', '--record-delay-ms', '25'],
      { config: { 'execution.batch.job-recovery.keep-running-tasks': 'true' } },
    );
    await waitForLog(cluster, jobId, (f) => f.size >= 2, 60_000, 'two finished subtasks');
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(atKill.size, 'the job was still running at the kill').toBeLessThan(6);
    const restarted = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 180_000);
    await restarted;
    const numbered = await readSinkLines(out);
    const ids = numbered.map((l) => Number(l.slice(0, l.indexOf('\t'))));
    expect(numbered.map((l) => l.slice(l.indexOf('\t') + 1)).sort()).toEqual([...lines].sort());
    expect(ids.every((id) => Number.isSafeInteger(id) && id >= 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const report = firstRecoveryAfter(final.recoveries, killed.epoch);
    expect(report).toMatchObject({ restartedFromScratch: false });
    expect(report?.runningTasksAdopted ?? 0).toBeGreaterThan(0);
    // Of the subtasks the killed leader deployed, none that was running ran again: they were kept
    // in place. Only a finished one may rerun, when it finished after the coordinator's newest
    // snapshot (FLIP-383: the restored coordinator does not know what it handed that attempt).
    const events = await cluster.taskEvents();
    const before = new Set(
      events
        .filter((e) => e.jobId === jobId && e.event === 'task.deploy' && (e.epoch ?? 0) <= killed.epoch)
        .map((e) => subtaskKey(e.vertexId, e.subtask)),
    );
    const again = redeployedSubtasks(deploymentsAfter(events, jobId, killed.epoch)).filter((k) => before.has(k));
    expect(again.filter((k) => !atKill.has(k))).toEqual([]);
  });

  it('a TaskManager that dies while there is no leader: only its tasks rerun', async () => {
    const out = join(data, 'out-tm-dies');
    const { jobId, sourceId } = await submit(out, true);
    const { killed, frozen } = await killAllJobMasters(cluster);
    const deploys = (await cluster.taskEvents()).filter(
      (e) => e.jobId === jobId && e.event === 'task.deploy' && e.vertexId === sourceId,
    );
    const victim = deploys[0]!.taskManagerId;
    const lost = deploys.filter((e) => e.taskManagerId === victim).map((e) => subtaskKey(e.vertexId, e.subtask));
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.length).toBeLessThan(SOURCES);
    await cluster.kill(victim, 'SIGKILL');
    await resumeStandbys(cluster, frozen);
    const final = await cluster.waitForJob(jobId, 180_000);
    const restarted = cluster.startJobMaster({ id: killed.id });
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch).filter(
      (e) => e.vertexId === sourceId,
    );
    expect(redeployedSubtasks(redeployed)).toEqual(lost.sort());
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      restartedFromScratch: false,
      runningTasksAdopted: SOURCES - lost.length,
    });
    await restarted;
    await cluster.startTaskManager({ id: victim });
  });

  it('with keep-running-tasks=false the running source subtasks fail and rerun (the FLIP-383 baseline)', async () => {
    const out = join(data, 'out-flink');
    const { jobId, sourceId } = await submit(out, false);
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(finishedOf(atKill, sourceId)).toHaveLength(0);
    const restarted = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 180_000);
    await restarted;
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch).filter(
      (e) => e.vertexId === sourceId,
    );
    expect(redeployedSubtasks(redeployed)).toEqual(
      Array.from({ length: SOURCES }, (_, i) => subtaskKey(sourceId, i)).sort(),
    );
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)?.runningTasksAdopted ?? 0).toBe(0);
  });
});
