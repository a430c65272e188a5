import type { JobStatus__Output } from '@rebound/core';
import { visibleLength } from './format.js';
import { jobStatusToJson, taskCounts, vertexTotal } from './job-view.js';

export interface ProgressRenderOptions {
  /** Terminal width in columns. */
  readonly width: number;
  readonly color: boolean;
}

const ANSI = { reset: '\x1b[0m', green: '\x1b[32m', yellow: '\x1b[33m', red: '\x1b[31m', cyan: '\x1b[36m', dim: '\x1b[2m', bold: '\x1b[1m' };

function stateColor(state: string): string {
  switch (state.toUpperCase()) {
    case 'FINISHED':
      return ANSI.green;
    case 'FAILED':
    case 'FAILING':
    case 'CANCELED':
    case 'CANCELLED':
    case 'CANCELLING':
      return ANSI.red;
    case 'RECONCILING':
    case 'RESTARTING':
      return ANSI.yellow;
    case 'RUNNING':
      return ANSI.cyan;
    default:
      return ANSI.dim;
  }
}

function paint(text: string, color: string, enabled: boolean): string {
  return enabled ? `${color}${text}${ANSI.reset}` : text;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

function bar(done: number, total: number, width: number): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

function jobTotals(status: JobStatus__Output): { finished: number; total: number; undecided: number } {
  let finished = 0;
  let total = 0;
  let undecided = 0;
  for (const v of status.vertices) {
    finished += taskCounts(v).finished;
    const t = vertexTotal(v);
    total += t;
    if (t === 0) undecided++;
  }
  return { finished, total, undecided };
}

function jobStateText(state: string): string {
  return state === 'RECONCILING' ? 'RECONCILING (recovering progress after a JobMaster failover)' : state;
}

/**
 * The live progress block shown on a terminal: a header line and one bar per vertex. Pure: the
 * same status and width always give the same lines.
 */
export function renderProgress(status: JobStatus__Output, opts: ProgressRenderOptions): string[] {
  const { finished, total, undecided } = jobTotals(status);
  const epoch = status.leader_epoch ? `  leader epoch ${status.leader_epoch}` : '';
  const restarts = status.restarts > 0 ? `  restarts ${status.restarts}` : '';
  const header = `${paint(truncate(status.name || status.job_id, 32), ANSI.bold, opts.color)} ${status.job_id.slice(0, 8)}  ${paint(jobStateText(status.state), stateColor(status.state), opts.color)}  ${finished}/${total}${undecided ? '+' : ''} tasks${epoch}${restarts}`;
  const lines = [header];
  const nameWidth = Math.min(28, Math.max(6, ...status.vertices.map((v) => (v.name || v.id).length)));
  const countWidth = Math.max(3, ...status.vertices.map((v) => `${taskCounts(v).finished}/${vertexTotal(v) || '?'}`.length));
  // name, two spaces, [bar], space, counts, two spaces, state (~12)
  const barWidth = Math.max(10, Math.min(40, opts.width - nameWidth - countWidth - 22));
  for (const v of status.vertices) {
    const t = vertexTotal(v);
    const done = taskCounts(v).finished;
    const counts = `${done}/${t || '?'}`.padStart(countWidth);
    const running = taskCounts(v).running + taskCounts(v).deploying;
    const extra = running > 0 && v.state !== 'FINISHED' ? ` ${running} running` : '';
    lines.push(
      `  ${truncate(v.name || v.id, nameWidth).padEnd(nameWidth)}  [${bar(done, t, barWidth)}] ${counts}  ${paint(v.state, stateColor(v.state), opts.color)}${extra}`,
    );
  }
  if (status.failure) lines.push(`  failure: ${status.failure.split('\n')[0]}`);
  // Never wrap: a wrapped line would break the cursor arithmetic of the redraw.
  return lines.map((l) => (visibleLength(l) > opts.width && !opts.color ? truncate(l, opts.width) : l));
}

/** One line summarizing a status, for logs and pipes (printed only when it changes). */
export function progressLine(status: JobStatus__Output): string {
  const { finished, total, undecided } = jobTotals(status);
  const vertices = status.vertices.map((v) => `${v.name || v.id} ${taskCounts(v).finished}/${vertexTotal(v) || '?'} ${v.state}`);
  return [`job ${status.job_id} ${status.state} ${finished}/${total}${undecided ? '+' : ''} tasks`, ...vertices].join(' | ');
}

export interface ProgressSink {
  update(status: JobStatus__Output): void;
  /** A message between updates, e.g. "leader changed: epoch 3 at 127.0.0.1:4711". */
  note(message: string): void;
  /** Leaves the last state on screen. */
  finish(): void;
}

export interface TextOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Redraws the progress block in place with ANSI cursor movements. */
export class TtyProgress implements ProgressSink {
  private drawn = 0;
  private drawnText = '';
  private last: JobStatus__Output | undefined;

  constructor(
    private readonly out: TextOutput,
    private readonly color = true,
  ) {}

  update(status: JobStatus__Output): void {
    this.last = status;
    this.redraw();
  }

  note(message: string): void {
    this.erase();
    this.out.write(`${message}\n`);
    this.redraw(true);
  }

  finish(): void {
    this.drawn = 0;
  }

  private erase(): void {
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }

  private redraw(force = false): void {
    if (!this.last) return;
    const lines = renderProgress(this.last, { width: this.out.columns ?? 80, color: this.color });
    const text = lines.join('\n');
    if (!force && this.drawn > 0 && text === this.drawnText) return;
    this.drawnText = text;
    this.erase();
    this.out.write(lines.map((l) => `\x1b[2K${l}\n`).join(''));
    this.drawn = lines.length;
  }
}

/** For pipes and files: a plain line, only when something changed. */
export class PlainProgress implements ProgressSink {
  private lastLine = '';

  constructor(private readonly out: TextOutput) {}

  update(status: JobStatus__Output): void {
    const line = progressLine(status);
    if (line !== this.lastLine) {
      this.out.write(`${line}\n`);
      this.lastLine = line;
    }
  }

  note(message: string): void {
    this.out.write(`${message}\n`);
  }

  finish(): void {}
}

/** `watch --json`: one JSON object per changed status (JSON Lines); notes go to `notes`. */
export class JsonLinesProgress implements ProgressSink {
  private last = '';

  constructor(
    private readonly out: TextOutput,
    private readonly notes: TextOutput,
  ) {}

  update(status: JobStatus__Output): void {
    const json = JSON.stringify(jobStatusToJson(status));
    if (json !== this.last) {
      this.out.write(`${json}\n`);
      this.last = json;
    }
  }

  note(message: string): void {
    this.notes.write(`${message}\n`);
  }

  finish(): void {}
}

/** Progress not shown (e.g. `submit --json`); notes still go to `notes` (stderr). */
export class QuietProgress implements ProgressSink {
  constructor(private readonly notes: TextOutput) {}
  update(): void {}
  note(message: string): void {
    this.notes.write(`${message}\n`);
  }
  finish(): void {}
}

export function progressSinkFor(stdout: TextOutput, stderr: TextOutput, mode: { json: boolean; quiet?: boolean; color?: boolean }): ProgressSink {
  if (mode.quiet) return new QuietProgress(stderr);
  if (mode.json) return new JsonLinesProgress(stdout, stderr);
  if (stdout.isTTY) return new TtyProgress(stdout, mode.color ?? true);
  return new PlainProgress(stdout);
}
