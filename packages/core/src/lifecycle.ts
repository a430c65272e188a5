/**
 * A background loop owned by a component: runs `tick` every `intervalMs` (never overlapping
 * itself) until `stop()`. Errors are handed to `onError` and the loop goes on.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = true;

  constructor(
    private readonly intervalMs: number,
    private readonly tick: () => Promise<void> | void,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(runNow = false): void {
    if (!this.stopped) return;
    this.stopped = false;
    if (runNow) void this.run();
    else this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), this.intervalMs);
  }

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      await this.tick();
    } catch (err) {
      this.onError(err);
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
