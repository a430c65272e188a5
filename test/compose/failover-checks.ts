/**
 * What failover-suite.ts reads of the TaskManagers after the failover, for the variants that keep
 * running tasks (execution.batch.job-recovery.keep-running-tasks, on by default): which source
 * subtasks the killed leader had deployed, and whether any of them was deployed again.
 */
import { expect } from 'vitest';
import { parseTaskEvents, type TaskEvent } from '@rebound/cli/testing';
import { log, run } from './docker.js';

/**
 * The task lifecycle lines of the project's TaskManager containers, killed ones included (the
 * engine keeps an exited container's log). The daemons log pino lines to stderr; both streams
 * are read so that a change of stream does not make the check pass on an empty log.
 */
export async function taskEventsOf(
  project: string,
  env: NodeJS.ProcessEnv,
  taskManagers: readonly string[],
): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for (const service of taskManagers) {
    const ids = await run(
      'docker',
      [
        'ps',
        '-aq',
        '--filter',
        `label=com.docker.compose.project=${project}`,
        '--filter',
        `label=com.docker.compose.service=${service}`,
      ],
      env,
      30_000,
    );
    const id = ids.stdout.trim().split('\n')[0];
    if (!id) throw new Error(`no container of ${service} in project ${project}`);
    const logs = await run('docker', ['logs', id], env, 60_000);
    if (logs.code !== 0) throw new Error(`docker logs ${service} exited ${logs.code}: ${logs.stderr.slice(-500)}`);
    all.push(...parseTaskEvents(`${logs.stdout}\n${logs.stderr}`, service));
  }
  return all.sort((a, b) => a.time - b.time);
}

export interface KeptInPlace {
  /** `subtask@taskManager` deployed by the killed leader on a TaskManager that lived on. */
  readonly deployedBefore: readonly string[];
  /** Of those, deployed again by a later leader: each is a rerun adoption should have spared. */
  readonly redeployed: readonly string[];
  /** Of those, not finished by the attempt the killed leader deployed (canceled, failed, or no end logged). */
  readonly notFinishedInPlace: readonly string[];
  /** Of those, finished after `killedAtMs`: they ran through the failover. */
  readonly finishedAfterKill: number;
}

/**
 * A vertex's subtasks that the leader of `oldEpoch` (or an earlier one) deployed on a TaskManager
 * not in `killed`, and what became of them. Keyed by the TaskManagers' own log lines (deploying
 * epoch and attempt), not by when the test looked, so no race with the kill decides the outcome:
 * a subtask running at the kill and adopted keeps its attempt and is never deployed again, and
 * one that finished before the kill is reused (from the event log or the TaskManager's held
 * outcome); both finish by the attempt the old leader deployed. Subtasks on a killed TaskManager
 * are left out: their running attempts died with it and must run again.
 */
export function keptInPlace(
  events: readonly TaskEvent[],
  jobId: string,
  vertexId: string,
  oldEpoch: number,
  killed: readonly string[],
  killedAtMs: number,
): KeptInPlace {
  const mine = events.filter((e) => e.jobId === jobId && e.vertexId === vertexId);
  const before = mine.filter(
    (e) => e.event === 'task.deploy' && (e.epoch ?? 0) <= oldEpoch && !killed.includes(e.taskManagerId),
  );
  const later = new Set(
    mine.filter((e) => e.event === 'task.deploy' && (e.epoch ?? 0) > oldEpoch).map((e) => e.subtask),
  );
  const redeployed: string[] = [];
  const notFinishedInPlace: string[] = [];
  let finishedAfterKill = 0;
  for (const d of before) {
    const name = `${d.subtask}@${d.taskManagerId}`;
    if (later.has(d.subtask)) redeployed.push(name);
    const end = mine.find(
      (e) =>
        e.event !== 'task.deploy' &&
        e.subtask === d.subtask &&
        e.attempt === d.attempt &&
        e.taskManagerId === d.taskManagerId,
    );
    if (end?.event !== 'task.finish') notFinishedInPlace.push(`${name} (${end?.event ?? 'no end'})`);
    else if (end.time > killedAtMs) finishedAfterKill++;
  }
  return {
    deployedBefore: before.map((d) => `${d.subtask}@${d.taskManagerId}`),
    redeployed,
    notFinishedInPlace,
    finishedAfterKill,
  };
}

/** The recovery report's fields the keep-running checks read (camelCase, as `status --json`). */
export interface KeepRunningReport {
  readonly executionsRecovered: number;
  readonly finishedTasksReported: number;
  readonly runningTasksAdopted: number;
}

/**
 * What a user sees of a failover that kept running tasks: the report counts adopted tasks, and
 * the TaskManagers' logs show that no source subtask the killed leader deployed on a TaskManager
 * that lived on, running or finished, ran again. `finishedAtKill`: the source subtasks the old
 * leader had finished, each reused from the event log or from a TaskManager's held outcome.
 */
export function expectKeptRunning(
  report: KeepRunningReport,
  at: {
    readonly events: readonly TaskEvent[];
    readonly jobId: string;
    readonly sourceId: string;
    readonly oldEpoch: number;
    readonly killed: readonly string[];
    readonly killedAtMs: number;
    readonly finishedAtKill: number;
  },
): void {
  expect(report.executionsRecovered + report.finishedTasksReported).toBeGreaterThanOrEqual(at.finishedAtKill);
  expect(report.runningTasksAdopted, 'running tasks adopted').toBeGreaterThanOrEqual(1);
  const kept = keptInPlace(at.events, at.jobId, at.sourceId, at.oldEpoch, at.killed, at.killedAtMs);
  log(
    `kept in place: ${kept.deployedBefore.length} source subtasks of epoch ${at.oldEpoch} on live TaskManagers, ${kept.finishedAfterKill} finished after the kill`,
  );
  // Non-empty, or an unread log (the stream, the container) would pass the two checks below.
  expect(kept.deployedBefore.length).toBeGreaterThan(0);
  expect(kept.redeployed, 'source subtasks of the killed leader deployed again').toEqual([]);
  expect(kept.notFinishedInPlace, 'source subtasks of the killed leader not finished in place').toEqual([]);
}
