import { errorMessage } from '@rebound/core';
import type { Logger } from '@rebound/core';
import type { TaskManagerDirectory } from './task-manager-directory.js';

/**
 * During the reconnect window of a reconciling leader: which TaskManagers may still hold
 * something of the job, and whether each has settled, that is answered
 * GetAndRetainPartitionsWithMetrics (or failed to) or is known gone. Once all have, nothing more
 * can arrive and the wait ends, without running to
 * `execution.batch.job-recovery.previous-worker.recovery.timeout` because a TaskManager died or a
 * subtask was never deployed.
 *
 * Expected are the TaskManagers registered now, those the event log names (where finished
 * executions ran) and those whose endpoints the HA services list. A registered TaskManager that
 * was asked settles only by its answer, even if the directory calls it gone.
 */
export class ReconnectSettlement {
  private readonly expected: Set<string>;
  private readonly askedIds = new Set<string>();
  private readonly answeredIds = new Set<string>();
  private gone: ReadonlySet<string> = new Set();
  /** False until the directory was read once (a leader without one waits for what it knows). */
  private directoryRead: boolean;
  private readonly startedAtMs = Date.now();

  constructor(
    expected: readonly string[],
    private readonly directory: TaskManagerDirectory | undefined,
    private readonly logger: Logger,
  ) {
    this.expected = new Set(expected);
    this.directoryRead = directory === undefined;
  }

  asked(tmId: string): void {
    this.expected.add(tmId);
    this.askedIds.add(tmId);
  }

  answered(tmId: string): void {
    this.expected.add(tmId);
    this.answeredIds.add(tmId);
  }

  allSettled(): boolean {
    if (!this.directoryRead) return false;
    for (const id of this.expected) {
      if (this.answeredIds.has(id)) continue;
      if (this.gone.has(id) && !this.askedIds.has(id)) continue;
      return false;
    }
    return true;
  }

  elapsedMs(): number {
    return Date.now() - this.startedAtMs;
  }

  /** For the log line that ends the wait. */
  describe(): { answered: string[]; gone: string[]; waitingFor: string[] } {
    const waitingFor = [...this.expected].filter(
      (id) => !this.answeredIds.has(id) && !(this.gone.has(id) && !this.askedIds.has(id)),
    );
    return { answered: [...this.answeredIds].sort(), gone: [...this.gone].sort(), waitingFor: waitingFor.sort() };
  }

  /**
   * Reads the directory now and every `pollMs` (a TaskManager may die during the window), calling
   * `changed` after each read. Returns the function that stops it.
   */
  watch(pollMs: number, changed: () => void): () => void {
    const directory = this.directory;
    if (!directory) return () => {};
    let stopped = false;
    let reading = false;
    const read = async (): Promise<void> => {
      if (reading || stopped) return;
      reading = true;
      try {
        for (const id of await directory.published()) this.expected.add(id);
        this.gone = await directory.gone([...this.expected]);
        this.directoryRead = true;
      } catch (err) {
        this.logger.debug({ err: errorMessage(err) }, 'reading the TaskManagers of the HA services failed');
      } finally {
        reading = false;
      }
      if (!stopped) changed();
    };
    void read();
    const timer = setInterval(() => void read(), pollMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }
}
