/**
 * At most one pending timer per job, e.g. the one that releases a job's retained partitions when
 * no new leader takes them in time. A timer is forgotten before its action runs, so the action
 * may start a new one; `stop` is for the leader that came in time.
 */
export class JobTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  has(jobId: string): boolean {
    return this.timers.has(jobId);
  }

  start(jobId: string, delayMs: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(jobId);
      action();
    }, delayMs);
    this.timers.set(jobId, timer);
  }

  stop(jobId: string): void {
    const t = this.timers.get(jobId);
    if (t) {
      clearTimeout(t);
      this.timers.delete(jobId);
    }
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
