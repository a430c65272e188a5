import type { JobStatus__Output, VertexStatus__Output } from '@rebound/core';
import { formatDurationMs } from './format.js';
import { taskCounts, vertexTotal } from './job-view.js';
import { recoverySentence } from './recovery-text.js';
import { leaderName, type WatchView } from './watch-model.js';
import { displayWidth, padToWidth, truncateToWidth, wrapToWidth } from './width.js';

export interface RenderOptions {
  /** Terminal width in columns: no line of the result is wider. */
  readonly width: number;
  readonly color: boolean;
  /** Relative times ("lost 1.4 s ago") are drawn against this clock. */
  readonly nowMs: number;
}

const ANSI = {
  reset: '\x1b[0m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  red: '\x1b[31m',
  cyan: '\x1b[36m',
  dim: '\x1b[2m',
  bold: '\x1b[1m',
};

export function stateColor(state: string): string {
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
    case 'NO LEADER':
    case 'TAKING OVER':
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

function bar(done: number, total: number, width: number): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

export function jobTotals(status: JobStatus__Output): { finished: number; total: number; undecided: number } {
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

/** The state shown in the header: the job's, unless no leader is there to vouch for it. */
function headerState(view: WatchView): string {
  if (view.gap?.loading || view.gap?.newLeader) return 'TAKING OVER';
  if (view.gap) return 'NO LEADER';
  return view.status?.state ?? 'CONNECTING';
}

function headerLeader(view: WatchView, nowMs: number): string {
  const gap = view.gap;
  // The banner below says how long ago the old leader last answered.
  if (gap?.newLeader) return `new leader ${leaderName(gap.newLeader)}`;
  if (gap) return `no leader for ${formatDurationMs(nowMs - gap.sinceMs)}`;
  return view.leader ? `leader ${leaderName(view.leader)}` : '';
}

/**
 * One bar per vertex. While no leader answers the rows are the last ones seen: drawn dim, without
 * the running counts nobody can vouch for any more.
 */
function vertexRows(vertices: readonly VertexStatus__Output[], opts: RenderOptions, lastSeen: boolean): string[] {
  const nameWidth = Math.min(28, Math.max(6, ...vertices.map((v) => displayWidth(v.name || v.id))));
  const countWidth = Math.max(3, ...vertices.map((v) => `${taskCounts(v).finished}/${vertexTotal(v) || '?'}`.length));
  // indent 2, name, 2, [bar], 1, counts, 2, state and "N running" (~20)
  const barWidth = Math.max(5, Math.min(40, opts.width - nameWidth - countWidth - 29));
  return vertices.map((v) => {
    const t = vertexTotal(v);
    const c = taskCounts(v);
    const counts = `${c.finished}/${t || '?'}`.padStart(countWidth);
    const running = c.running + c.deploying;
    const name = padToWidth(truncateToWidth(v.name || v.id, nameWidth), nameWidth);
    if (lastSeen)
      return `  ${paint(`${name}  [${bar(c.finished, t, barWidth)}] ${counts}  last seen ${v.state}`, ANSI.dim, opts.color)}`;
    const extra = running > 0 && v.state !== 'FINISHED' ? ` ${running} running` : '';
    return `  ${name}  [${bar(c.finished, t, barWidth)}] ${counts}  ${paint(v.state, stateColor(v.state), opts.color)}${extra}`;
  });
}

/** The banner under the bars while a failover is under way. */
function failoverLines(view: WatchView, nowMs: number): string[] {
  const gap = view.gap;
  const st = view.status;
  if (gap) {
    const lost = gap.lostLeader ? leaderName(gap.lostLeader) : 'the leader';
    const since = formatDurationMs(nowMs - gap.sinceMs);
    if (gap.loading)
      return [
        `! ${leaderName(gap.newLeader)} took over and is loading the job from the JobGraphStore (${since} since ${lost} last answered)`,
      ];
    if (gap.newLeader)
      return [
        `! ${leaderName(gap.newLeader)} was elected; waiting for it to serve (${since} since ${lost} last answered)`,
      ];
    return [`! no leader for ${since}: ${lost} stopped answering; a standby takes over once its lease expires`];
  }
  if (st?.state === 'RECONCILING') {
    const restored = st.vertices
      .filter((v) => taskCounts(v).finished > 0)
      .map((v) => `${(v.name || v.id).split(' -> ')[0]} ${taskCounts(v).finished}/${vertexTotal(v) || '?'}`);
    const finished = jobTotals(st).finished;
    const tms = view.taskManagers;
    const back =
      tms && tms.epoch === st.leader_epoch
        ? `TaskManagers reported back: ${tms.registered.join(', ') || 'none yet'} (${tms.registered.length}${tms.expected ? ` of ${tms.expected}` : ''})`
        : 'waiting for the TaskManagers to report back';
    return [
      `~ RECONCILING under ${leaderName(view.leader)}: replaying the event log, ${finished} finished task${finished === 1 ? '' : 's'} restored${restored.length ? ` (${restored.join(', ')})` : ''}`,
      `~ ${back}`,
    ];
  }
  return [];
}

/**
 * The live block of `watch` on a terminal: a header, one bar per vertex, then what a failover is
 * doing and one sentence per failover the job survived. Pure: same view, width and clock give
 * the same lines, and none is wider than `width`.
 */
export function renderWatch(view: WatchView, opts: RenderOptions): string[] {
  const st = view.status;
  const state = headerState(view);
  const name = st?.name || view.jobId;
  const totals = st ? jobTotals(st) : undefined;
  const tasks = totals ? `  ${totals.finished}/${totals.total}${totals.undecided ? '+' : ''} tasks` : '';
  const leader = headerLeader(view, opts.nowMs);
  const header = `${paint(truncateToWidth(name, 32), ANSI.bold, opts.color)} ${view.jobId.slice(0, 8)}  ${paint(state, stateColor(state), opts.color)}${tasks}${leader ? `  ${leader}` : ''}`;
  const lines = [header, ...(st ? vertexRows(st.vertices, opts, view.gap !== undefined) : [])];
  const wrapped = (text: string, color: string): string[] =>
    wrapToWidth(text, opts.width - 2, '  ').map((l) => `  ${paint(l, color, opts.color)}`);
  for (const l of failoverLines(view, opts.nowMs)) lines.push(...wrapped(l, ANSI.yellow));
  for (const [i, r] of (st?.recoveries ?? []).entries())
    lines.push(...wrapped(recoverySentence(r, i, opts.nowMs), r.restarted_from_scratch ? ANSI.red : ANSI.green));
  if (st?.failure) lines.push(...wrapped(`failure: ${st.failure.split('\n')[0]}`, ANSI.red));
  for (const note of st?.notes ?? []) lines.push(...wrapped(`note: ${note}`, ANSI.dim));
  return lines.map((l) => truncateToWidth(l, opts.width));
}

/** One line summarizing a status, for logs and pipes (printed only when it changes). */
export function progressLine(status: JobStatus__Output): string {
  const { finished, total, undecided } = jobTotals(status);
  const vertices = status.vertices.map(
    (v) => `${v.name || v.id} ${taskCounts(v).finished}/${vertexTotal(v) || '?'} ${v.state}`,
  );
  return [`job ${status.job_id} ${status.state} ${finished}/${total}${undecided ? '+' : ''} tasks`, ...vertices].join(
    ' | ',
  );
}
