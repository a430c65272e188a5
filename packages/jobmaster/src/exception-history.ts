import type { ExecutionVertex } from './execution-graph.js';

/** One failure as Flink's `/jobs/:id/exceptions` shows it (`exceptionHistory.entries[]`). */
export interface ExceptionHistoryEntry {
  readonly exceptionName: string;
  readonly stacktrace: string;
  readonly timestamp: number;
  readonly taskName: string | null;
  readonly endpoint: string | null;
  readonly taskManagerId: string | null;
  readonly failureLabels: Record<string, string>;
  readonly concurrentExceptions: readonly Omit<ExceptionHistoryEntry, 'concurrentExceptions'>[];
}

export interface ExceptionHistorySnapshot {
  readonly entries: readonly ExceptionHistoryEntry[];
  readonly truncated: boolean;
}

/**
 * The task failures of one job, newest first, at most `web.exception-history-size` of them (Flink's
 * key and default). Kept in the leader's memory while the job runs, as Flink keeps it (a new leader
 * starts an empty one; the recovery report says what the failover itself cost), and stored with
 * the job's final status when it ends (JobRecords.saveExceptions).
 */
export class ExceptionHistory {
  private readonly list: ExceptionHistoryEntry[] = [];
  private dropped = false;

  constructor(private readonly size: number) {}

  /** Failures of the same cause at the same moment: the first is the root, the others concurrent. */
  record(failed: readonly ExecutionVertex[], exceptionName: string, reason: string, nowMs: number): void {
    const [root, ...concurrent] = failed.map((ev) => entryOf(ev, exceptionName, reason, nowMs));
    if (!root || this.size <= 0) return;
    this.list.unshift({ ...root, concurrentExceptions: concurrent.map(({ concurrentExceptions: _, ...e }) => e) });
    if (this.list.length > this.size) {
      this.list.length = this.size;
      this.dropped = true;
    }
  }

  snapshot(): ExceptionHistorySnapshot {
    return { entries: [...this.list], truncated: this.dropped };
  }
}

function entryOf(ev: ExecutionVertex, exceptionName: string, reason: string, nowMs: number): ExceptionHistoryEntry {
  return {
    exceptionName,
    stacktrace: reason,
    timestamp: nowMs,
    // Flink's task name with its subtask: "Map (2/4)".
    taskName: `${ev.jobVertex.name} (${ev.subtask + 1}/${ev.jobVertex.parallelism})`,
    endpoint: ev.location?.address || null,
    taskManagerId: ev.location?.task_manager_id || null,
    failureLabels: {},
    concurrentExceptions: [],
  };
}
