import { performance } from 'node:perf_hooks';

/**
 * User functions run on the TaskManager's only thread. Batches that are already buffered (a
 * remote stream hands over many chunks at once; a generator source yields without I/O) flow
 * through promise resolution alone, which never lets timers or I/O run: a long enough run of
 * CPU-heavy user code starves the heartbeats, and the JobMaster declares the TaskManager lost
 * and reruns its tasks. So a task gives the event loop a turn whenever it has worked this long
 * without one (well below any heartbeat interval; a turn costs microseconds).
 */
export const MAX_BUSY_MS = 50;

/** Reduce results pushed on between two backpressure checks. */
export const DRAIN_BATCH_SIZE = 1024;

export class EventLoopTurns {
  private last = performance.now();

  constructor(private readonly busyMs = MAX_BUSY_MS) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.last < this.busyMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}
