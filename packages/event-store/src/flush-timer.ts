import type { Clock } from '@rebound/core';

/**
 * The timer behind `job-event.store.write-buffer.flush-interval`: runs the store's flush once
 * after a delay; the returned function cancels it. Injected so tests drive time by hand.
 */
export interface FlushTimer {
  schedule(delayMs: number, task: () => void): () => void;
}

/** Real timers. Unreferenced: a pending flush timer never keeps a process alive on its own. */
export const realFlushTimer: FlushTimer = {
  schedule(delayMs, task) {
    const handle = setTimeout(task, delayMs);
    handle.unref();
    return () => clearTimeout(handle);
  },
};

interface ManualTask {
  at: number;
  seq: number;
  task: () => void;
}

/**
 * A clock and flush timer whose time moves only when told to: tests drive the flush interval
 * with `advance(ms)` instead of sleeping.
 */
export class ManualClock implements Clock, FlushTimer {
  private time: number;
  private seq = 0;
  private tasks: ManualTask[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  schedule(delayMs: number, task: () => void): () => void {
    const entry: ManualTask = { at: this.time + Math.max(0, delayMs), seq: this.seq++, task };
    this.tasks.push(entry);
    return () => {
      this.tasks = this.tasks.filter((t) => t !== entry);
    };
  }

  /** Tasks waiting to run. */
  pending(): number {
    return this.tasks.length;
  }

  /** Moves time forward, running every task that falls due, in time order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.tasks.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.tasks = this.tasks.filter((t) => t !== due);
      this.time = Math.max(this.time, due.at);
      due.task();
    }
    this.time = target;
  }
}
