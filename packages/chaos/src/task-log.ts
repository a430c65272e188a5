/**
 * Which finished tasks a fault made run again, from the TaskManagers' task lifecycle log lines
 * (`event: "task.deploy" | "task.finish" | ...`), judged against the job event log as it was on
 * disk right after the fault.
 */

// One parser of the task lifecycle lines, shared with the cluster driver the tests use.
import { parseTaskEvents, type TaskEvent } from '@rebound/cli/testing';

export { parseTaskEvents, type TaskEvent };

export function subtaskKey(vertexId: string, subtask: number): string {
  return `${vertexId}#${subtask}`;
}

/** A moment the harness disrupted the cluster, with what the event log held right after it. */
export interface Disruption {
  readonly at: number;
  readonly label: string;
  /** subtaskKey → attempt of its last finished event in the log (resets applied), after the fault. */
  readonly durableFinished: ReadonlyMap<string, number>;
  /**
   * Subtasks whose partition the fault destroyed on purpose (partition-delete, a damaged partition
   * on a shuffle worker) or that lived only on shuffle workers it killed.
   */
  readonly destroyedPartitions?: ReadonlySet<string>;
  /** TaskManagers that released their retained partitions because of the fault (jobmasters-pause). */
  readonly releasedOn?: ReadonlySet<string>;
  /**
   * TaskManagers a network cut made the leader take for lost through a heartbeat timeout (its own,
   * or the TaskManager's, which then registered again): their finished partitions are dropped.
   */
  readonly lostOn?: ReadonlySet<string>;
  /** The fault left a log that cannot be read (not a torn tail): a restart from scratch is the design. */
  readonly logCorrupted?: boolean;
}

export interface RerunRecord {
  readonly subtask: string;
  readonly vertexName: string;
  readonly attempt: number;
  readonly taskManagerId: string;
  readonly finishedAt: number;
  readonly redeployedAt: number;
  readonly disruption: string;
  readonly taskManagerLived: boolean;
  readonly durable: boolean;
  /** Why the rerun is expected although the event was durable and the TaskManager lived. */
  readonly excuse?: string;
  /** Durable, TaskManager lived, no excuse: the rerun should not have happened. */
  readonly violation: boolean;
}

export interface TaskAccounting {
  /** Finished (and not redeployed) when a disruption happened, summed over disruptions. */
  readonly finishedBeforeFault: number;
  readonly kept: number;
  readonly rerun: number;
  readonly rerunExcused: number;
  readonly violations: number;
  readonly reruns: readonly RerunRecord[];
}

/** Where finished partitions live: on their TaskManagers, or on shuffle workers (remote shuffle). */
export type PartitionHolders = 'taskmanager' | 'shuffle-worker';

/**
 * For each disruption (in time order): the subtasks whose last lifecycle event before it was
 * `task.finish` count as finished before the fault; those deployed again before the next
 * disruption were rerun because of it. A rerun is a violation when the finished event was in the
 * log after the fault, its output survived (its TaskManager was not killed, cut off or made to
 * release it; on remote shuffle, whatever became of its TaskManager), and the fault did not
 * destroy that output.
 */
export function accountTasks(
  events: readonly TaskEvent[],
  jobId: string,
  disruptions: readonly Disruption[],
  tmKills: readonly { readonly id: string; readonly at: number }[],
  holders: PartitionHolders = 'taskmanager',
): TaskAccounting {
  // On remote shuffle a TaskManager holds no finished partition: its death, its cut and its
  // release after the registration timeout excuse no rerun.
  const onTaskManagers = holders === 'taskmanager';
  const mine = events.filter((e) => e.jobId === jobId).sort((a, b) => a.time - b.time);
  const sorted = [...disruptions].sort((a, b) => a.at - b.at);
  const reruns: RerunRecord[] = [];
  let finishedBeforeFault = 0;
  let kept = 0;
  sorted.forEach((d, i) => {
    const end = sorted[i + 1]?.at ?? Infinity;
    const last = new Map<string, TaskEvent>();
    for (const e of mine) {
      if (e.time >= d.at) break;
      last.set(subtaskKey(e.vertexId, e.subtask), e);
    }
    for (const [key, fin] of last) {
      if (fin.event !== 'task.finish') continue;
      finishedBeforeFault++;
      const redeploy = mine.find(
        (e) => e.event === 'task.deploy' && e.time >= d.at && e.time < end && subtaskKey(e.vertexId, e.subtask) === key,
      );
      if (!redeploy) {
        kept++;
        continue;
      }
      const taskManagerLived =
        !onTaskManagers ||
        !tmKills.some((k) => k.id === fin.taskManagerId && k.at >= fin.time && k.at <= redeploy.time);
      const durable = d.durableFinished.get(key) === fin.attempt;
      // Destroyed output stays destroyed: a partition deleted by an earlier fault may only be
      // missed by its consumer after a later one.
      const destroyedBy = sorted.find(
        (x) => x.at >= fin.time && x.at <= redeploy.time && x.destroyedPartitions?.has(key),
      );
      const releasedBy = sorted.find(
        (x) => onTaskManagers && x.at >= fin.time && x.at <= redeploy.time && x.releasedOn?.has(fin.taskManagerId),
      );
      const lostBy = sorted.find(
        (x) => onTaskManagers && x.at >= fin.time && x.at <= redeploy.time && x.lostOn?.has(fin.taskManagerId),
      );
      let excuse: string | undefined;
      if (destroyedBy) excuse = `the fault "${destroyedBy.label}" destroyed its partition`;
      else if (releasedBy)
        excuse = 'its TaskManager released the retained partitions after taskmanager.registration.timeout';
      else if (lostBy)
        excuse = `a heartbeat timeout during "${lostBy.label}" made the leader take its TaskManager for lost`;
      else if (d.logCorrupted) excuse = 'the fault corrupted the event log: the job restarts from scratch by design';
      reruns.push({
        subtask: key,
        vertexName: fin.vertexName,
        attempt: fin.attempt,
        taskManagerId: fin.taskManagerId,
        finishedAt: fin.time,
        redeployedAt: redeploy.time,
        disruption: d.label,
        taskManagerLived,
        durable,
        ...(excuse ? { excuse } : {}),
        violation: durable && taskManagerLived && excuse === undefined,
      });
    }
  });
  const violations = reruns.filter((r) => r.violation).length;
  const rerunExcused = reruns.filter((r) => r.durable && r.taskManagerLived && r.excuse !== undefined).length;
  return { finishedBeforeFault, kept, rerun: reruns.length, rerunExcused, violations, reruns };
}

/**
 * Subtasks of `jobId` whose last lifecycle event in the TaskManagers' logs before `at` is
 * `task.finish`: the finished work a fault at `at` put to the test. Read from the TaskManagers,
 * not from the leader's status, which may count a task finished that no TaskManager finished (or
 * lag behind one that did).
 */
export function finishedBefore(events: readonly TaskEvent[], jobId: string, at: number): number {
  const last = new Map<string, TaskEvent>();
  for (const e of [...events].sort((a, b) => a.time - b.time)) {
    if (e.jobId !== jobId) continue;
    if (e.time >= at) break;
    last.set(subtaskKey(e.vertexId, e.subtask), e);
  }
  return [...last.values()].filter((e) => e.event === 'task.finish').length;
}

/** The menu's faults that take the leader down while the TaskManagers stay reachable. */
export const LEADER_LOSS_LABELS: readonly string[] = ['leader-kill:', 'leader-pause:', 'leader-and-tm-kill:'];

export interface RunningRedeploy {
  readonly subtask: string;
  readonly vertexName: string;
  readonly attempt: number;
  readonly taskManagerId: string;
  readonly deployedAt: number;
  readonly redeployedAt: number;
  readonly disruption: string;
  /** Its TaskManager lived and no fault cut it off or made it drop its kept tasks. */
  readonly onLiveTaskManager: boolean;
}

export interface RunningAccounting {
  /** Subtasks running (deployed, not ended) at a leader kill or pause, summed over those faults. */
  readonly runningAtFault: number;
  /** Of those, deployed again before the next disruption. */
  readonly redeployed: number;
  /** Of the redeployed, those that ran on a live TaskManager the next leader could reach. */
  readonly redeployedOnLiveTaskManager: number;
  readonly redeploys: readonly RunningRedeploy[];
}

/**
 * Issue 21 (keep-running-tasks): for each leader kill or pause, the subtasks whose last lifecycle
 * event before it was `task.deploy` were running; one deployed again before the next disruption
 * was not adopted. With the key on, that is a violation unless its TaskManager died, was cut off
 * (`lostOn`), released its kept tasks (`releasedOn`), the fault left an unreadable log, or the
 * attempt failed by itself (a task.fail with an error code) before it was deployed again.
 */
export function accountRunningTasks(
  events: readonly TaskEvent[],
  jobId: string,
  disruptions: readonly Disruption[],
  tmKills: readonly { readonly id: string; readonly at: number }[],
): RunningAccounting {
  const mine = events.filter((e) => e.jobId === jobId).sort((a, b) => a.time - b.time);
  const sorted = [...disruptions].sort((a, b) => a.at - b.at);
  const redeploys: RunningRedeploy[] = [];
  let runningAtFault = 0;
  sorted.forEach((d, i) => {
    if (!LEADER_LOSS_LABELS.some((l) => d.label.startsWith(l))) return;
    const end = sorted[i + 1]?.at ?? Infinity;
    const last = new Map<string, TaskEvent>();
    for (const e of mine) {
      if (e.time >= d.at) break;
      last.set(subtaskKey(e.vertexId, e.subtask), e);
    }
    for (const [key, dep] of last) {
      if (dep.event !== 'task.deploy') continue;
      runningAtFault++;
      const redeploy = mine.find(
        (e) => e.event === 'task.deploy' && e.time >= d.at && e.time < end && subtaskKey(e.vertexId, e.subtask) === key,
      );
      if (!redeploy) continue;
      const lived = !tmKills.some((k) => k.id === dep.taskManagerId && k.at >= dep.time && k.at <= redeploy.time);
      const cutOff = sorted.some(
        (x) =>
          x.at >= dep.time &&
          x.at <= redeploy.time &&
          (x.lostOn?.has(dep.taskManagerId) || x.releasedOn?.has(dep.taskManagerId) || x.logCorrupted),
      );
      // The attempt failed by itself while there was no leader (a partition it read was deleted,
      // say): there was nothing left to adopt. A TaskManager's own abort logs no error code.
      const failedByItself = mine.some(
        (e) =>
          e.event === 'task.fail' &&
          e.code !== undefined &&
          subtaskKey(e.vertexId, e.subtask) === key &&
          e.attempt === dep.attempt &&
          e.taskManagerId === dep.taskManagerId &&
          e.time >= d.at &&
          e.time <= redeploy.time,
      );
      redeploys.push({
        subtask: key,
        vertexName: dep.vertexName,
        attempt: dep.attempt,
        taskManagerId: dep.taskManagerId,
        deployedAt: dep.time,
        redeployedAt: redeploy.time,
        disruption: d.label,
        onLiveTaskManager: lived && !cutOff && !failedByItself,
      });
    }
  });
  return {
    runningAtFault,
    redeployed: redeploys.length,
    redeployedOnLiveTaskManager: redeploys.filter((r) => r.onLiveTaskManager).length,
    redeploys,
  };
}
