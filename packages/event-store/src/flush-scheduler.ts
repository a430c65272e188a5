import type { FlushTimer } from './flush-timer.js';

/**
 * When a FileSystemJobEventStore flushes: on request, or `intervalMs` after an event that did not
 * fill the buffer. Flushes and the other file tasks run one at a time on a promise chain, so that
 * they never overlap and each sees the file as the one before it left it.
 */
export class FlushScheduler {
  private cancel: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    private readonly timer: FlushTimer,
    private readonly intervalMs: number,
    private readonly flush: () => Promise<void>,
  ) {}

  /** Starts the flush interval, unless it is already running. */
  flushLater(): void {
    if (this.cancel) return;
    this.cancel = this.timer.schedule(this.intervalMs, () => {
      this.cancel = undefined;
      void this.requestFlush();
    });
  }

  cancelTimer(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** Runs `task` on the single writer, after everything enqueued before it. */
  enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => {});
    return run;
  }

  requestFlush(): Promise<void> {
    if (this.queued) return this.queued;
    const queued = this.enqueue(async () => {
      this.queued = undefined;
      await this.flush();
    });
    this.queued = queued;
    return queued;
  }

  /** Settles once what is enqueued so far has run. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Resolves once nothing is running or queued. */
  async idle(): Promise<void> {
    let chain: Promise<void>;
    do {
      chain = this.chain;
      await chain;
    } while (chain !== this.chain);
  }
}
