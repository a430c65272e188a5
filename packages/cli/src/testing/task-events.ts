/**
 * The TaskManagers' task lifecycle log lines (`event: "task.deploy" | "task.finish" | ...`), as
 * the tests, the chaos harness and the benchmarks read them to see which tasks ran where.
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
  /** task.fail of a task's own failure: its error code (a TaskManager's abort has none). */
  readonly code?: string;
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
      ...(typeof o.code === 'string' ? { code: o.code } : {}),
    });
  }
  return events;
}
