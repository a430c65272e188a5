import { jobStatusToJson } from './job-view.js';
import type { ProgressSink, TextOutput } from './progress-sink.js';
import type { WatchView } from './watch-model.js';
import { progressLine } from './watch-render.js';

export { progressLine, renderWatch } from './watch-render.js';
export type { ProgressSink, TextOutput } from './progress-sink.js';

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

/** The terminal view (and log-update) is loaded only for a terminal: a script's submit skips it. */
export async function progressSinkFor(
  stdout: TextOutput,
  stderr: TextOutput,
  mode: { json: boolean; quiet?: boolean; color?: boolean },
): Promise<ProgressSink> {
  if (mode.quiet) return new QuietProgress(stderr);
  if (mode.json) return new JsonLinesProgress(stdout, stderr);
  if (stdout.isTTY) return new (await import('./tty-progress.js')).TtyProgress(stdout, mode.color ?? true);
  return new PlainProgress(stdout);
}
