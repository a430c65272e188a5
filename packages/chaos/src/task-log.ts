/**
 * Which finished tasks a fault made run again, from the TaskManagers' task lifecycle log lines
 * (`event: "task.deploy" | "task.finish" | ...`), judged against the job event log as it was on
 * disk right after the fault.
 */

export interface TaskEvent {
  readonly event: 'task.deploy' | 'task.finish' | 'task.fail' | 'task.cancel';
  readonly jobId: string;
  readonly vertexId: string;
  readonly vertexName: string;
  readonly subtask: number;
  readonly attempt: number;
  readonly taskManagerId: string;
  readonly epoch?: number;
  readonly time: number;
}

const TASK_EVENTS = new Set(['task.deploy', 'task.finish', 'task.fail', 'task.cancel']);

/** Parses the task lifecycle lines of a TaskManager's pino log (other lines are skipped). */
export function parseTaskEvents(log: string, taskManagerId: string): TaskEvent[] {
  const events: TaskEvent[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"task.')) continue;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof o.event !== 'string' || !TASK_EVENTS.has(o.event)) continue;
    events.push({
      event: o.event as TaskEvent['event'],
      jobId: String(o.jobId ?? ''),
      vertexId: String(o.vertexId ?? ''),
      vertexName: String(o.vertexName ?? ''),
      subtask: Number(o.subtask ?? 0),
      attempt: Number(o.attempt ?? 0),
      taskManagerId: typeof o.taskManagerId === 'string' ? o.taskManagerId : taskManagerId,
      ...(typeof o.epoch === 'number' ? { epoch: o.epoch } : {}),
      time: Number(o.time ?? 0),
    });
  }
  return events;
}

export function subtaskKey(vertexId: string, subtask: number): string {
  return `${vertexId}#${subtask}`;
}

/** A moment the harness disrupted the cluster, with what the event log held right after it. */
export interface Disruption {
  readonly at: number;
  readonly label: string;
  /** subtaskKey → attempt of its last finished event in the log (resets applied), after the fault. */
  readonly durableFinished: ReadonlyMap<string, number>;
  /** Subtasks whose partition the fault destroyed on purpose (partition-delete). */
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

/**
 * For each disruption (in time order): the subtasks whose last lifecycle event before it was
 * `task.finish` count as finished before the fault; those deployed again before the next
 * disruption were rerun because of it. A rerun is a violation when the finished event was in the
 * log after the fault, its TaskManager was not killed, and the fault did not destroy its output.
 */
export function accountTasks(
  events: readonly TaskEvent[],
  jobId: string,
  disruptions: readonly Disruption[],
  tmKills: readonly { readonly id: string; readonly at: number }[],
): TaskAccounting {
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
      const redeploy = mine.find((e) => e.event === 'task.deploy' && e.time >= d.at && e.time < end && subtaskKey(e.vertexId, e.subtask) === key);
      if (!redeploy) {
        kept++;
        continue;
      }
      const taskManagerLived = !tmKills.some((k) => k.id === fin.taskManagerId && k.at >= fin.time && k.at <= redeploy.time);
      const durable = d.durableFinished.get(key) === fin.attempt;
      // Destroyed output stays destroyed: a partition deleted by an earlier fault may only be
      // missed by its consumer after a later one.
      const destroyedBy = sorted.find((x) => x.at >= fin.time && x.at <= redeploy.time && x.destroyedPartitions?.has(key));
      const releasedBy = sorted.find((x) => x.at >= fin.time && x.at <= redeploy.time && x.releasedOn?.has(fin.taskManagerId));
      const lostBy = sorted.find((x) => x.at >= fin.time && x.at <= redeploy.time && x.lostOn?.has(fin.taskManagerId));
      let excuse: string | undefined;
      if (destroyedBy) excuse = `the fault "${destroyedBy.label}" deleted its partition`;
      else if (releasedBy) excuse = 'its TaskManager released the retained partitions after taskmanager.registration.timeout';
      else if (lostBy) excuse = `a heartbeat timeout during "${lostBy.label}" made the leader take its TaskManager for lost`;
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
