import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReboundError, decodeMessage, encodeMessage } from '@rebound/core';
import { dumpJobEvents } from '@rebound/event-store';
import type { HeldTask__Output, JobGraph__Output } from '@rebound/core';
import { buildJob, defineJob } from '@rebound/api';
import { until } from '../testing/fake-task-manager.js';
import { InProcessLeaders, finish, type Deployment, type Leader } from '../testing/in-process-leaders.js';

/**
 * keep-running-tasks (issue 21) in one process: the TaskManager's reports of the tasks it kept
 * through a failover are stood in for by the fake gateway's `held`.
 */

const JOB_ID = 'abcdefabcdefabcdefabcdefabcdef21';
const SOURCE = 'v-op-1';
const KEEP = {
  'execution.batch.job-recovery.keep-running-tasks': 'true',
  'execution.batch.job-recovery.previous-worker.recovery.timeout': '30 s',
};

async function seqGraph(): Promise<{
  graph: JobGraph__Output;
  operators: Awaited<ReturnType<typeof buildJob>>['operators'];
}> {
  // 8 splits of 13 numbers, 4 source subtasks.
  const def = defineJob('seq', (env) => {
    env.generateSequence(0, 103, { splitSize: 13 }).writeAsText(join(tmpdir(), 'rebound-adoption-unused'));
  });
  const built = await buildJob(def, []);
  const graph = decodeMessage<JobGraph__Output>(
    'JobGraph',
    encodeMessage('JobGraph', {
      ...built.graph,
      job_id: JOB_ID,
      module_digest: '0'.repeat(64),
      config: { 'execution.batch.job-recovery.enabled': 'true' },
      vertices: (built.graph.vertices ?? []).map((v) => (v.id === SOURCE ? { ...v, parallelism: 4 } : v)),
    }),
  );
  return { graph, operators: built.operators };
}

async function splitOf(l: Leader, d: Deployment): Promise<string> {
  const res = await l.job.requestSplit({
    execution: d.tdd.execution,
    epoch: d.tdd.epoch,
    operator_id: 'op-1',
    finished_split_ids: [],
  });
  expect(res.split_json ?? '').not.toBe('');
  return res.split_json ?? '';
}

function held(d: Deployment, state: HeldTask__Output['state'], splits: string[]): HeldTask__Output {
  return {
    execution: d.tdd.execution,
    deploy_epoch: d.tdd.epoch,
    state,
    splits_json: splits,
    io_metrics:
      state === 'FINISHED'
        ? { records_in: 13, records_out: 13, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] }
        : null,
    sink_temp_file: d.tdd.sink_temp_file,
    coordinator_responses: [],
  };
}

const idOf = (json: string): string => (JSON.parse(json) as { id: string }).id;

describe('adopting tasks kept through a JobMaster failover', () => {
  let dir: string;
  let leaders: InProcessLeaders | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-adoption-'));
  });
  afterEach(async () => {
    await leaders?.close();
    leaders = undefined;
  });

  /** Leader 1 hands out splits; sub2 finishes (logged), the rest are held by the TaskManager. */
  async function firstLeader(): Promise<{
    l1: Leader;
    subs: Deployment[];
    held: HeldTask__Output[];
    heldIds: string[];
    finishedId: string;
  }> {
    const { graph, operators } = await seqGraph();
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect();
    await until(() => l1.gateway.of(SOURCE).length === 4, 'leader 1 to deploy the sources');
    const subs = l1.gateway.of(SOURCE).sort((a, b) => a.tdd.execution!.subtask - b.tdd.execution!.subtask);
    const s0 = await splitOf(l1, subs[0]!);
    const s1 = await splitOf(l1, subs[1]!);
    const s2 = await splitOf(l1, subs[2]!);
    const s3 = await splitOf(l1, subs[3]!);
    finish(l1.job, subs[2]!); // its finished event carries its split and a snapshot
    const s0b = await splitOf(l1, subs[0]!);
    await splitOf(l1, subs[1]!); // the answer never reached the TaskManager: lost in flight
    await leaders.kill(l1);
    const heldTasks = [
      held(subs[0]!, 'RUNNING', [s0, s0b]),
      held(subs[1]!, 'RUNNING', [s1]),
      held(subs[3]!, 'FINISHED', [s3]), // finished while there was no leader
    ];
    return { l1, subs, held: heldTasks, heldIds: [s0, s0b, s1, s3].map(idOf), finishedId: idOf(s2) };
  }

  it('adopts running attempts in place, records the finished one, and no split is lost or read twice', async () => {
    const first = await firstLeader();
    const l2 = await leaders!.elect({ config: KEEP, held: new Map([['tm-1', first.held]]) });
    expect(l2.gateway.adoptAsked.get('tm-1')).toBe(true);
    expect(l2.recoveries.at(-1)).toMatchObject({ running_tasks_adopted: 2, finished_tasks_reported: 1 });
    expect(l2.gateway.of(SOURCE)).toHaveLength(0); // nothing redeployed
    expect(l2.gateway.canceled).toEqual([]);
    const ev = (i: number) => l2.job.graph.executionVertex(SOURCE, i)!;
    expect([0, 1, 2, 3].map((i) => ev(i).state)).toEqual(['RUNNING', 'RUNNING', 'FINISHED', 'FINISHED']);
    expect([ev(0).attempt, ev(0).attemptEpoch, ev(0).location?.task_manager_id]).toEqual([0, 1, 'tm-1']);
    expect(l2.registry.get('tm-1')!.freeSlots).toBe(8 - 2);

    // The adopted readers drain the source from the new leader, asking with its epoch.
    const handed: string[] = [];
    for (const d of [first.subs[0]!, first.subs[1]!]) {
      for (;;) {
        const res = await l2.job.requestSplit({
          execution: d.tdd.execution,
          epoch: 2,
          deploy_epoch: 1,
          operator_id: 'op-1',
          finished_split_ids: [],
        });
        if (res.no_more_splits) break;
        expect(res.split_json).not.toBe('');
        handed.push(idOf(res.split_json ?? ''));
      }
    }
    const all = [...first.heldIds, first.finishedId, ...handed];
    expect(all.length).toBe(8);
    expect(new Set(all).size).toBe(8);
  });

  it('a source task is deployed only once the log on disk has its vertex initialized', async () => {
    // Flushed only on demand: what is on disk when a task starts is what the leader made durable.
    const { graph, operators } = await seqGraph();
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: KEEP, flushIntervalMs: 3_600_000 });
    await until(() => l1.gateway.of(SOURCE).length === 4, 'leader 1 to deploy the sources');
    const onDisk = await dumpJobEvents(join(dir, 'ha'), JOB_ID);
    // A leader paused now leaves a log whose next leader adopts the running tasks, not one it
    // mistakes for an empty log (and so restarts the job from scratch, canceling them).
    expect(onDisk.events.map((e) => e.type)).toContain('ExecutionJobVertexInitialized');
  });

  /**
   * The reconnect wait ends once every TaskManager that may hold something of the job answered or
   * is known gone, not at previous-worker.recovery.timeout: here tm-2 died while there was no
   * leader (its endpoint names a dead process), and two subtasks were never deployed.
   */
  it('ends the reconnect wait when the TaskManagers answered or are gone, not at the timeout', async () => {
    const { graph, operators } = await seqGraph();
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    // One slot each for 4 source subtasks: two of them wait for a slot and are never deployed.
    const l1 = await leaders.elect({ config: KEEP, taskManagers: ['tm-1', 'tm-2'], slots: 1 });
    await until(() => l1.gateway.of(SOURCE).length === 2, 'leader 1 to deploy two sources');
    const deployed = l1.gateway.of(SOURCE);
    const on = (tm: string) => deployed.filter((d) => d.taskManagerId === tm);
    expect([on('tm-1').length, on('tm-2').length]).toEqual([1, 1]);
    await leaders.kill(l1);
    const directory = {
      published: async () => ['tm-1', 'tm-2'],
      gone: async (ids: readonly string[]) => new Set(ids.filter((id) => id === 'tm-2')),
    };
    const startedAt = Date.now();
    const l2 = await leaders.elect({
      config: { ...KEEP, 'execution.batch.job-recovery.previous-worker.recovery.timeout': '12 s' },
      taskManagers: ['tm-1'],
      slots: 8,
      held: new Map([['tm-1', on('tm-1').map((d) => held(d, 'RUNNING', []))]]),
      taskManagerDirectory: directory,
    });
    const report = l2.recoveries.at(-1)!;
    expect(report.running_tasks_adopted).toBe(on('tm-1').length);
    expect(Number(report.reconnect_wait_ms)).toBeLessThan(5_000);
    expect(report.reconnect_wait_ended).toBe('holders-settled');
    expect(Date.now() - startedAt).toBeLessThan(8_000);
    // What tm-2 ran, and what never ran, runs again; what tm-1 kept does not.
    const rerun = new Set(l2.gateway.of(SOURCE).map((d) => d.tdd.execution!.subtask));
    const kept = new Set(on('tm-1').map((d) => d.tdd.execution!.subtask));
    for (const s of [0, 1, 2, 3]) expect(rerun.has(s)).toBe(!kept.has(s));
  });

  /*
   * Chaos seed 40 (remote shuffle, jobmasters-pause): a deposed leader handed a finished
   * subtask's split to a new reader before it learned it no longer led. The next leader's log has
   * that subtask finished: the reader is canceled, not adopted, and nothing is read twice.
   */
  it('does not adopt a kept reader holding a split a finished subtask consumed', async () => {
    const first = await firstLeader();
    const stolen = held(first.subs[1]!, 'RUNNING', [JSON.stringify({ id: first.finishedId })]);
    const reports = [first.held[0]!, stolen, first.held[2]!];
    const l2 = await leaders!.elect({ config: KEEP, held: new Map([['tm-1', reports]]) });
    expect(l2.recoveries.at(-1)).toMatchObject({ running_tasks_adopted: 1, finished_tasks_reported: 1 });
    expect(l2.gateway.canceled).toEqual([`${SOURCE}#1@0e1`]);
    await until(() => l2.gateway.of(SOURCE).length === 1, 'leader 2 to deploy subtask 1 again');
    expect(l2.gateway.of(SOURCE)[0]!.tdd.execution!.subtask).toBe(1);
  });

  it('a late report of an attempt of another leader is fenced by its deploying epoch', async () => {
    const first = await firstLeader();
    const l2 = await leaders!.elect({ config: KEEP, held: new Map([['tm-1', first.held]]) });
    // Same attempt number, another deploying epoch: not the adopted attempt.
    expect(l2.job.currentAttempt(first.subs[0]!.tdd.execution, 7)).toBeUndefined();
    expect(l2.job.currentAttempt(first.subs[0]!.tdd.execution, 1)).toBeDefined();
  });

  /** What each GetAndRetainPartitionsWithMetrics of a second leader asked, and how far its recovery was then. */
  async function partitionRequestsOfSecondLeader(keepRunning: boolean): Promise<string[]> {
    const first = await firstLeader();
    const asked: string[] = [];
    await leaders!.elect({
      config: { ...KEEP, 'execution.batch.job-recovery.keep-running-tasks': String(keepRunning) },
      taskManagers: ['tm-1', 'tm-2'],
      held: new Map([['tm-1', first.held]]),
      onPartitionsRequested: (job, tmId, adopt) => {
        const finished = job.graph.findVertex(SOURCE)!.vertices.filter((ev) => ev.state === 'FINISHED').length;
        asked.push(`${tmId} adopt_tasks=${adopt}, finished sources known: ${finished}`);
      },
    });
    return asked;
  }

  // So that they gather and send their answers, and this leader receives them, while the log replays.
  it('asks each TaskManager once, as the replay starts', async () => {
    expect(await partitionRequestsOfSecondLeader(false)).toEqual([
      'tm-1 adopt_tasks=false, finished sources known: 0',
      'tm-2 adopt_tasks=false, finished sources known: 0',
    ]);
  });

  it('with keep-running-tasks too, handing the kept tasks over then: they are refused until the decision', async () => {
    expect(await partitionRequestsOfSecondLeader(true)).toEqual([
      'tm-1 adopt_tasks=true, finished sources known: 0',
      'tm-2 adopt_tasks=true, finished sources known: 0',
    ]);
  });

  it('a kept task that calls the leader at once when handed over, before the replay, is told to retry', async () => {
    const first = await firstLeader();
    const [reader, , , done] = first.subs;
    const answers: string[] = [];
    const l2 = await leaders!.elect({
      config: KEEP,
      held: new Map([['tm-1', first.held]]),
      // As the TaskManager's kept tasks may, the moment they answer to this leader.
      onPartitionsRequested: (job) => {
        void job
          .requestSplit({ execution: reader!.tdd.execution, epoch: 2, operator_id: 'op-1', finished_split_ids: [] })
          .then((r) => answers.push(`split: ask again in ${r.retry_after_ms} ms`));
        try {
          job.onTaskExecutionState({
            execution: done!.tdd.execution,
            state: 'FINISHED',
            task_manager_id: 'tm-1',
            epoch: 2,
            deploy_epoch: 1,
            io_metrics: { records_in: 13, records_out: 13, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
            error_code: '',
            error_message: '',
            missing_partition: null,
          });
          answers.push('update: taken');
        } catch (err) {
          answers.push(`update: ${err instanceof ReboundError ? err.code : String(err)}`);
        }
      },
    });
    expect(answers).toEqual(['update: UNAVAILABLE', 'split: ask again in 100 ms']);
    expect(l2.recoveries.at(-1)).toMatchObject({ running_tasks_adopted: 2, finished_tasks_reported: 1 });
  });

  it('with keep-running-tasks=false the reports are ignored and the unfinished sources rerun', async () => {
    const first = await firstLeader();
    const l2 = await leaders!.elect({
      config: {
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '0 ms',
      },
      held: new Map([['tm-1', first.held]]),
    });
    expect(l2.gateway.adoptAsked.get('tm-1')).toBe(false);
    await until(() => l2.gateway.of(SOURCE).length === 3, 'leader 2 to rerun the three unfinished sources');
    expect(l2.recoveries.at(-1)?.running_tasks_adopted ?? 0).toBe(0);
    // The kept tasks are not awaited, and nothing else was needed: no wait at all.
    expect(l2.recoveries.at(-1)?.reconnect_wait_ended).toBe('all-reported');
  });
});
