import { createLogUpdate } from 'log-update';
import type { ProgressSink, TextOutput } from './progress-sink.js';
import type { WatchView } from './watch-model.js';
import { renderWatch } from './watch-render.js';

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
