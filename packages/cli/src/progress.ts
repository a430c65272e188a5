import { createLogUpdate } from 'log-update';
import { jobStatusToJson } from './job-view.js';
import type { WatchView } from './watch-model.js';
import { progressLine, renderWatch } from './watch-render.js';

export { progressLine, renderWatch } from './watch-render.js';

/** Where progress goes: process.stdout, or a fake in tests. */
export interface TextOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

export interface ProgressSink {
  /** The whole view after an observation, and the events that observation caused (one line each). */
  update(view: WatchView, events: readonly string[]): void;
  /** Leaves the last state on screen. */
  finish(): void;
}

/**
 * The live view on a terminal. log-update redraws the block in place (it erases exactly the
 * lines it drew); renderWatch never draws a line wider than the terminal, so no line wraps and
 * the count stays right. Times in the block tick with every poll.
 */
export class TtyProgress implements ProgressSink {
  private render: ReturnType<typeof createLogUpdate>;
  private view: WatchView | undefined;
  private width: number;
  private readonly onResize = (): void => this.resized();

  constructor(
    private readonly out: TextOutput,
    private readonly color = true,
    private readonly now: () => number = Date.now,
  ) {
    this.render = this.newRenderer();
    this.width = this.columns();
    out.on?.('resize', this.onResize);
  }

  update(view: WatchView): void {
    this.view = view;
    this.draw();
  }

  finish(): void {
    this.draw();
    this.render.done();
    this.out.off?.('resize', this.onResize);
  }

  private columns(): number {
    return Math.max(20, this.out.columns ?? 80);
  }

  private newRenderer(): ReturnType<typeof createLogUpdate> {
    // log-update only needs write/columns/rows; it hides the cursor while drawing, done() shows it.
    return createLogUpdate(this.out as NodeJS.WriteStream);
  }

  private draw(): void {
    if (!this.view) return;
    this.render(renderWatch(this.view, { width: this.columns(), color: this.color, nowMs: this.now() }).join('\n'));
  }

  /**
   * After a width change the terminal may have re-wrapped (tmux, most emulators) or cut (xterm)
   * the lines already drawn, so the number of rows to erase is unknown: clear the screen and
   * draw afresh rather than leave half-erased lines behind.
   */
  private resized(): void {
    const width = this.columns();
    if (width === this.width) return;
    this.width = width;
    this.out.write('\x1b[2J\x1b[H');
    this.render = this.newRenderer();
    this.draw();
  }
}

/** For pipes and files: one line per change (a status line when progress moved, each event). */
export class PlainProgress implements ProgressSink {
  private lastLine = '';

  constructor(private readonly out: TextOutput) {}

  update(view: WatchView, events: readonly string[]): void {
    for (const e of events) this.out.write(`${e}\n`);
    if (!view.status) return;
    const line = progressLine(view.status);
    if (line !== this.lastLine) {
      this.out.write(`${line}\n`);
      this.lastLine = line;
    }
  }

  finish(): void {}
}

/** `watch --json`: one JSON object per changed status (JSON Lines); events go to `notes` (stderr). */
export class JsonLinesProgress implements ProgressSink {
  private last = '';

  constructor(
    private readonly out: TextOutput,
    private readonly notes: TextOutput,
  ) {}

  update(view: WatchView, events: readonly string[]): void {
    for (const e of events) this.notes.write(`${e}\n`);
    if (!view.status) return;
    const json = JSON.stringify(jobStatusToJson(view.status));
    if (json !== this.last) {
      this.out.write(`${json}\n`);
      this.last = json;
    }
  }

  finish(): void {}
}

/** Progress not shown (e.g. `submit --json`); events still go to `notes` (stderr). */
export class QuietProgress implements ProgressSink {
  constructor(private readonly notes: TextOutput) {}
  update(_view: WatchView, events: readonly string[]): void {
    for (const e of events) this.notes.write(`${e}\n`);
  }
  finish(): void {}
}

export function progressSinkFor(stdout: TextOutput, stderr: TextOutput, mode: { json: boolean; quiet?: boolean; color?: boolean }): ProgressSink {
  if (mode.quiet) return new QuietProgress(stderr);
  if (mode.json) return new JsonLinesProgress(stdout, stderr);
  if (stdout.isTTY) return new TtyProgress(stdout, mode.color ?? true);
  return new PlainProgress(stdout);
}
