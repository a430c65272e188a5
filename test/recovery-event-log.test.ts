import { open, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobEventsDump } from '@rebound/event-store';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  HISTOGRAM_JOB,
  MIDDLE_PARALLELISM,
  allSubtasks,
  deployedKeys,
  deploymentsAfter,
  expectedHistogram,
  finishedInLog,
  finishedOf,
  histogramArgs,
  killAllJobMasters,
  killLeader,
  readEventLog,
  resumeStandbys,
  waitForLog,
  waitForNewLeader,
  type FinishedExecution,
  type SubtaskKey,
  histogramStarted,
} from './recovery-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from './util.js';

const RECORDS = 2000;
const KEYS = 97;

/**
 * Batch job recovery from a damaged job event log (a torn tail, a flipped bit, a file that is no
 * event file any more, damage in a file older than the newest) and from a second leader death
 * while the first recovery is still RECONCILING. The damage is done while no JobMaster runs: the standby is frozen, the leader
 * SIGKILLed, the newest event file changed, then the standby takes over.
 */
describe('batch job recovery from a damaged event log', () => {
  let cluster: LocalCluster;
  let data: string;
  let frozen: string[] = [];
  let paused: string[] = [];
  let restarting: Promise<unknown> | undefined;

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
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-recovery-');
  });

  afterEach(async () => {
    await resumeStandbys(cluster, [...frozen, ...paused]).catch(() => undefined);
    frozen = [];
    paused = [];
    await restarting?.catch(() => undefined);
    restarting = undefined;
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function sourceOf(jobId: string) {
    return histogramStarted(cluster, jobId);
  }

  /**
   * Runs the histogram with one slow source split and leaves the cluster without a leader once
   * the three other source subtasks finished: the newest event file then ends with their
   * finished events.
   */
  async function killWithThreeSourcesFinished(name: string) {
    const out = join(data, name);
    // The slow split's reader takes 20 batches of 300 ms: still running when the leader dies, even on a loaded machine.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, slowSplitDelayMs: 300 }),
    );
    const { source } = await sourceOf(jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 3,
      30_000,
      'three source subtasks finished',
    );
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    const dump = await readEventLog(cluster, jobId);
    const atKill = finishedInLog(dump);
    expect(finishedOf(atKill, source.id)).toHaveLength(3);
    const newest = dump.summary.fileDetails.at(-1)!;
    const records = dump.events.filter((e) => e.file === newest.file);
    return {
      jobId,
      out,
      source,
      killed: all.killed,
      atKill,
      newest,
      path: join(dump.summary.directory, newest.file),
      records,
    };
  }

  /** Lets the frozen standby take over; the killed JobMaster is started again as the next standby. */
  async function bringBackLeader(killed: { id: string; epoch: number }): Promise<void> {
    await resumeStandbys(cluster, frozen);
    frozen = [];
    await waitForNewLeader(cluster, killed.epoch);
    restarting = cluster.startJobMaster({ id: killed.id });
  }

  async function finishAndCheck(jobId: string, out: string, killedEpoch: number) {
    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killedEpoch);
    return { final, redeployed };
  }

  function expectedRerun(
    vertices: readonly { id: string; parallelism: number }[],
    recovered: ReadonlyMap<SubtaskKey, FinishedExecution>,
  ): SubtaskKey[] {
    return allSubtasks(vertices).filter((k) => !recovered.has(k));
  }

  async function flipBit(path: string, offset: number, bit: number): Promise<void> {
    const fh = await open(path, 'r+');
    try {
      const b = Buffer.alloc(1);
      await fh.read(b, 0, 1, offset);
      b[0]! ^= 1 << bit;
      await fh.write(b, 0, 1, offset);
    } finally {
      await fh.close();
    }
  }

  function finishedRecords(records: JobEventsDump['events']) {
    return records.filter((r) => r.type === 'ExecutionVertexFinished');
  }

  it('recovers what the intact prefix says when the newest event file has a torn tail', async () => {
    const { jobId, out, killed, atKill, newest, path, records } = await killWithThreeSourcesFinished('torn');
    const last = records.at(-1)!;
    expect(last.type).toBe('ExecutionVertexFinished');
    // A crash in the middle of writing the last record.
    const cut = last.offset + Math.floor((newest.bytes - last.offset) / 2);
    await truncate(path, cut);
    const damaged = await readEventLog(cluster, jobId);
    expect(damaged.summary.tornTails).toEqual([
      { file: newest.file, offset: last.offset, bytes: cut - last.offset, reason: expect.any(String) },
    ]);
    const recovered = finishedInLog(damaged);
    expect(recovered.size).toBe(atKill.size - 1);

    await bringBackLeader(killed);
    const { final, redeployed } = await finishAndCheck(jobId, out, killed.epoch);
    expect(deployedKeys(redeployed)).toEqual(expectedRerun(final.vertices, recovered));
    expect(final.recoveries.at(-1)).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: recovered.size,
      tornTailBytesDiscarded: cut - last.offset,
      partitionsReused: recovered.size,
    });

    const human = await cluster.rebound(['status', jobId]);
    expect(human.code, human.stderr).toBe(0);
    // One sentence per failover (packages/cli/src/recovery-text.ts), with the same numbers.
    expect(human.stdout).toContain('Survived 1 JobMaster failover:');
    expect(human.stdout).toMatch(
      new RegExp(
        `${recovered.size} finished tasks? kept with ${recovered.size} partitions? \\([^)]*\\) reused; .*${cut - last.offset} B of torn event-log tail discarded`,
      ),
    );
  });

  it('ends the newest file at a record with a flipped bit and recovers what precedes it', async () => {
    const { jobId, out, killed, newest, path, records } = await killWithThreeSourcesFinished('flipped');
    const finished = finishedRecords(records);
    expect(finished.length).toBeGreaterThanOrEqual(3);
    // A bit in the payload of the second finished event; records after it are intact.
    const hit = finished[1]!;
    await flipBit(path, hit.offset + 16 + 3, 5);
    const damaged = await readEventLog(cluster, jobId);
    expect(damaged.summary.corruption).toBeUndefined();
    expect(damaged.summary.tornTails).toEqual([
      { file: newest.file, offset: hit.offset, bytes: newest.bytes - hit.offset, reason: 'checksum-mismatch' },
    ]);
    const recovered = finishedInLog(damaged);
    expect([...recovered.keys()]).toEqual([`${finished[0]!.event.vertex_id}#${finished[0]!.event.subtask}`]);

    await bringBackLeader(killed);
    const { final, redeployed } = await finishAndCheck(jobId, out, killed.epoch);
    expect(deployedKeys(redeployed)).toEqual(expectedRerun(final.vertices, recovered));
    expect(final.recoveries.at(-1)).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: 1,
      tornTailBytesDiscarded: newest.bytes - hit.offset,
    });
  });

  it('restarts from scratch, and says why, when an event file is corrupt in a way no crash explains', async () => {
    const { jobId, out, killed, path } = await killWithThreeSourcesFinished('corrupt');
    // One flipped bit in the file's magic number: not an event file any more.
    await flipBit(path, 0, 1);
    const damaged = await readEventLog(cluster, jobId);
    expect(damaged.summary.corruption?.message).toMatch(/bad magic/);

    await bringBackLeader(killed);
    const { final, redeployed } = await finishAndCheck(jobId, out, killed.epoch);
    // Every subtask runs again in the new epoch (some perhaps more than once: see the report).
    expect([...new Set(deployedKeys(redeployed))]).toEqual(allSubtasks(final.vertices));
    const report = final.recoveries.at(-1)!;
    expect(report.restartedFromScratch).toBe(true);
    expect(report.reason).toMatch(/replaying the job events failed.*bad magic/);
    expect(final.notes.join('\n')).toMatch(/restarted from scratch/);

    const human = await cluster.rebound(['status', jobId]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /recovery failed \(replaying the job events failed \(corrupt\): .*bad magic\)\), so the job restarted from scratch\./,
    );
  });

  it('replays only the prefix before damage in an older file: what later files recorded reruns', async () => {
    const out = join(data, 'older');
    // A slow middle stage (about 10 s): the second leader is still running it when it is killed.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, slowSplitDelayMs: 100, reduceDelayMs: 10 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0' },
      },
    );
    const { source, middle } = await sourceOf(jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 3,
      30_000,
      'three source subtasks finished',
    );
    // The first leader dies; the second writes its own file (the slow source subtask finishing at least).
    const first = await killLeader(cluster);
    const second = await waitForNewLeader(cluster, first.epoch);
    await cluster.startJobMaster({ id: first.id });
    await waitForLog(
      cluster,
      jobId,
      (f, dump) => dump.events.some((e) => e.epoch === second.epoch && e.type === 'ExecutionVertexFinished'),
      60_000,
      'a finished event of the second leader',
    );
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    expect(all.killed.epoch).toBe(second.epoch);

    const before = await readEventLog(cluster, jobId);
    expect(finishedOf(finishedInLog(before), middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);
    const files = before.summary.fileDetails;
    expect(files.length).toBeGreaterThanOrEqual(2);
    const older = files[0]!;
    const olderFinished = finishedRecords(before.events.filter((e) => e.file === older.file));
    expect(olderFinished.length).toBeGreaterThanOrEqual(3);
    // A bit in the payload of the first leader's second finished event: no crash explains it,
    // and the second leader's file was written on the history as it was before the damage.
    const hit = olderFinished[1]!;
    await flipBit(join(before.summary.directory, older.file), hit.offset + 16 + 3, 5);
    // Expected from the undamaged log, not from the reader under test: only what precedes the hit.
    const prefix = before.events.filter((e) => e.file === older.file && e.offset < hit.offset);
    const recovered = finishedInLog({ ...before, events: prefix });
    expect(recovered.size).toBe(1);
    let laterBytes = 0;
    for (const f of files.slice(1)) laterBytes += (await stat(join(before.summary.directory, f.file))).size;
    const discarded = older.bytes - hit.offset + laterBytes;

    const damaged = await readEventLog(cluster, jobId);
    expect(damaged.summary.cut).toEqual({
      file: older.file,
      offset: hit.offset,
      reason: 'checksum-mismatch',
      bytes: discarded,
      laterFiles: files.slice(1).map((f) => f.file),
      expected: false,
    });

    await bringBackLeader(all.killed);
    const { final, redeployed } = await finishAndCheck(jobId, out, second.epoch);
    // Everything not in the prefix reruns, including what the second leader had finished.
    expect(deployedKeys(redeployed)).toEqual(expectedRerun(final.vertices, recovered));
    const report = final.recoveries.at(-1)!;
    expect(report).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: 1,
      tornTailBytesDiscarded: discarded,
      partitionsReused: 1,
    });
    expect(report.reason).toMatch(new RegExp(`damaged before its end, at ${older.file} offset ${hit.offset}`));
    expect(final.notes.join('\n')).toMatch(/damaged before its end/);
  });

  it('recovers when the new leader is killed too, while it is still RECONCILING', async () => {
    const out = join(data, 'twice');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 2 }),
      {
        config: {
          'taskmanager.network.combiner.max-keys': '0',
          'execution.batch.job-recovery.previous-worker.recovery.timeout': '60 s',
        },
      },
    );
    const { source, middle } = await sourceOf(jobId);
    const atKill = await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === 4,
      30_000,
      'every source subtask finished',
    );
    // A TaskManager that holds source output cannot answer: the next leader waits for it.
    const holder = finishedOf(atKill, source.id)[0]!.taskManagerId;
    await cluster.kill(holder, 'SIGSTOP');
    paused = [holder];
    const first = await killLeader(cluster);
    expect(finishedOf(finishedInLog(await readEventLog(cluster, jobId)), middle.id).length).toBeLessThan(
      MIDDLE_PARALLELISM,
    );
    restarting = cluster.startJobMaster({ id: first.id });
    const second = await waitForNewLeader(cluster, first.epoch);
    await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        return st.leaderEpoch === second.epoch && st.state === 'RECONCILING';
      },
      30_000,
      'the second leader to reconcile',
    );
    await restarting;
    restarting = undefined;

    await killLeader(cluster);
    await resumeStandbys(cluster, paused);
    paused = [];
    const third = await waitForNewLeader(cluster, second.epoch);
    restarting = cluster.startJobMaster({ id: second.id });
    const recovered = finishedInLog(await readEventLog(cluster, jobId));

    const { final, redeployed } = await finishAndCheck(jobId, out, first.epoch);
    // The second leader deployed nothing; the third reran exactly what was unfinished.
    expect(redeployed.filter((e) => e.epoch === second.epoch)).toEqual([]);
    expect(deployedKeys(redeployed)).toEqual(expectedRerun(final.vertices, recovered));
    expect(redeployed.every((e) => e.epoch === third.epoch)).toBe(true);
    expect(final.recoveries.at(-1)).toMatchObject({
      epoch: third.epoch,
      restartedFromScratch: false,
      partitionsReused: 4,
      partitionsMissing: 0,
    });
  });
});
