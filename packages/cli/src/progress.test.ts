import { describe, expect, it } from 'vitest';
import type { LeaderAddress } from './client.js';
import { jobStatusToJson } from './job-view.js';
import { endLine } from './jobs.js';
import { JsonLinesProgress, PlainProgress, progressLine } from './progress.js';
import { TtyProgress } from './tty-progress.js';
import { FakeScreen } from './testing/screen.js';
import { recovery, status, vertex } from './testing/fixtures.js';
import { WatchModel, type WatchObservation } from './watch-model.js';
import { renderWatch } from './watch-render.js';
import { displayWidth } from './width.js';

const jm1: LeaderAddress = { address: '127.0.0.1:4001', epoch: 1, jobmasterId: 'jm-1' };
const jm2: LeaderAddress = { address: '127.0.0.1:4002', epoch: 2, jobmasterId: 'jm-2' };
const T0 = 1_000_000;

/** Observe first, then show the view that observation produced (as followJob does). */
function feed(
  sink: { update(view: ReturnType<WatchModel['view']>, events: readonly string[]): void },
  model: WatchModel,
  o: WatchObservation,
): void {
  const events = model.observe(o);
  sink.update(model.view(), events);
}

const source = (finished: number, running = 0, state = 'RUNNING') =>
  vertex('Source: TextFiles -> FlatMap -> Map', 18, state, finished, running);
const sum = (finished = 0, parallelism = 0, state = 'CREATED') =>
  vertex('Sum(1) -> Sink: TextFile', parallelism, state, finished);

/** A leader SIGKILL as `watch` sees it, poll by poll. */
function failoverObservations(): WatchObservation[] {
  const rec = recovery({
    epoch: 2,
    old_leader_last_heard_ms: T0 + 1_000,
    elected_at_ms: T0 + 3_200,
    replay_ms: 11,
    reconnect_wait_ms: 142,
    executions_recovered: 12,
    partitions_reused: 12,
    partition_bytes_reused: 1_300_000,
    executions_reset: 0,
    started_at_ms: T0 + 3_300,
    finished_at_ms: T0 + 3_500,
  });
  return [
    {
      kind: 'overview',
      atMs: T0,
      overview: {
        jobmaster_id: 'jm-1',
        epoch: 1,
        task_managers: ['tm-1', 'tm-2', 'tm-3'].map((id) => ({
          task_manager_id: id,
          address: '',
          slots_total: 2,
          slots_free: 0,
          last_heartbeat_ms: 0,
        })),
      },
    },
    { kind: 'status', atMs: T0, leader: jm1, status: status('RUNNING', [source(6, 6), sum()], { leader_epoch: 1 }) },
    {
      kind: 'status',
      atMs: T0 + 1_000,
      leader: jm1,
      status: status('RUNNING', [source(12, 6), sum()], { leader_epoch: 1 }),
    },
    { kind: 'unreachable', atMs: T0 + 1_500, leader: jm1, message: 'connection refused' },
    { kind: 'unreachable', atMs: T0 + 2_400, leader: jm1, message: 'connection refused' },
    { kind: 'unreachable', atMs: T0 + 3_300, leader: jm2, message: 'connection refused' },
    { kind: 'status', atMs: T0 + 3_400, leader: jm2, status: status('CREATED', [], { leader_epoch: 2 }) },
    {
      kind: 'status',
      atMs: T0 + 3_500,
      leader: jm2,
      status: status('RECONCILING', [source(12, 0), sum()], { leader_epoch: 2 }),
    },
    {
      kind: 'overview',
      atMs: T0 + 3_500,
      overview: {
        jobmaster_id: 'jm-2',
        epoch: 2,
        task_managers: ['tm-2', 'tm-1'].map((id) => ({
          task_manager_id: id,
          address: '',
          slots_total: 2,
          slots_free: 0,
          last_heartbeat_ms: 0,
        })),
      },
    },
    {
      kind: 'status',
      atMs: T0 + 3_700,
      leader: jm2,
      status: status('RUNNING', [source(12, 6), sum()], { leader_epoch: 2, recoveries: [rec] }),
    },
    {
      kind: 'status',
      atMs: T0 + 9_000,
      leader: jm2,
      status: status('FINISHED', [source(18, 0, 'FINISHED'), sum(1, 1, 'FINISHED')], {
        leader_epoch: 2,
        recoveries: [rec],
        finished_at_ms: T0 + 9_000,
      }),
    },
  ];
}

describe('WatchModel', () => {
  it('tells the failover as it happens: lost, elected, loading, RECONCILING, recovered', () => {
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    const events = failoverObservations().flatMap((o) => model.observe(o));
    expect(events).toEqual([
      'leader lost: jm-1 (epoch 1) stopped answering; waiting for a standby to take over',
      'leader changed: epoch 2 at 127.0.0.1:4002 (jm-2), 2.3 s after the last answer of the old leader',
      'jm-2 (epoch 2) is loading the job from the JobGraphStore',
      "RECONCILING under jm-2 (epoch 2): replaying the job's event log and asking the TaskManagers which partitions they kept",
      'TaskManagers reported back to epoch 2: tm-1, tm-2 (2 of 3)',
      'recovered: Failover 1 (epoch 2): leader lost 2.7 s ago → elected after 2.2 s → replay 11 ms → reconnect 142 ms; 12 finished tasks kept with 12 partitions (1.2 MiB) reused; no finished work lost.',
    ]);
  });

  it('keeps the vertices while a new leader loads the job (no empty CREATED)', () => {
    const model = new WatchModel('j');
    const obs = failoverObservations();
    for (const o of obs.slice(0, 7)) model.observe(o);
    const view = model.view();
    expect(view.status?.state).toBe('RUNNING');
    expect(view.status?.vertices).toHaveLength(2);
    expect(view.gap).toMatchObject({ loading: true, newLeader: jm2 });
  });
});

describe('renderWatch', () => {
  const render = (o: WatchObservation[], width: number, nowMs: number): string[] => {
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    for (const x of o) model.observe(x);
    return renderWatch(model.view(), { width, color: false, nowMs });
  };

  it('shows the leader and the bars while running', () => {
    expect(render(failoverObservations().slice(0, 3), 80, T0 + 1_000)).toEqual([
      'wordcount 01234567  RUNNING  12/18+ tasks  leader jm-1 (epoch 1)',
      `  Source: TextFiles -> FlatMa…  [${'█'.repeat(12)}${'░'.repeat(6)}] 12/18  RUNNING 6 running`,
      `  Sum(1) -> Sink: TextFile      [${'░'.repeat(18)}]   0/?  CREATED`,
    ]);
  });

  it('replaces the header during the leaderless gap, with a ticking counter', () => {
    const lines = render(failoverObservations().slice(0, 5), 80, T0 + 2_400);
    expect(lines[0]).toBe('wordcount 01234567  NO LEADER  12/18+ tasks  no leader for 1.4 s');
    expect(
      lines
        .slice(3)
        .map((l) => l.trim())
        .join(' '),
    ).toContain('! no leader for 1.4 s: jm-1 (epoch 1) stopped answering; a standby takes over once its lease expires');
    expect(lines.join('\n')).not.toContain('leader jm-1');
    // The bars are what was last seen: no running count nobody vouches for.
    expect(lines[1]).toMatch(/12\/18 {2}last seen RUNNING$/);
  });

  it('shows RECONCILING with what was restored and which TaskManagers are back', () => {
    const lines = render(failoverObservations().slice(0, 9), 120, T0 + 3_500);
    expect(lines[0]).toMatch(/^wordcount 01234567  RECONCILING  12\/18\+ tasks  leader jm-2 \(epoch 2\)$/);
    expect(lines).toContain(
      '  ~ RECONCILING under jm-2 (epoch 2): replaying the event log, 12 finished tasks restored (Source: TextFiles 12/18)',
    );
    expect(lines).toContain('  ~ TaskManagers reported back: tm-1, tm-2 (2 of 3)');
  });

  it('ends with the recovery summary inline', () => {
    const lines = render(failoverObservations(), 120, T0 + 9_000);
    expect(lines[0]).toBe('wordcount 01234567  FINISHED  19/19 tasks  leader jm-2 (epoch 2)');
    expect(lines).toMatchInlineSnapshot(`
      [
        "wordcount 01234567  FINISHED  19/19 tasks  leader jm-2 (epoch 2)",
        "  Source: TextFiles -> FlatMa…  [████████████████████████████████████████] 18/18  FINISHED",
        "  Sum(1) -> Sink: TextFile      [████████████████████████████████████████]   1/1  FINISHED",
        "  Failover 1 (epoch 2): leader lost 8.0 s ago → elected after 2.2 s → replay 11 ms → reconnect 142 ms; 12 finished tasks",
        "    kept with 12 partitions (1.2 MiB) reused; no finished work lost.",
      ]
    `);
  });

  it('keep-running-tasks: progress carries on through the failover and the adopted tasks are named', () => {
    // The same failover, but the 6 running source subtasks kept running and were adopted.
    const rec = recovery({
      epoch: 2,
      old_leader_last_heard_ms: T0 + 1_000,
      elected_at_ms: T0 + 3_200,
      replay_ms: 11,
      reconnect_wait_ms: 142,
      executions_recovered: 12,
      partitions_reused: 12,
      partition_bytes_reused: 1_300_000,
      running_tasks_adopted: 6,
      started_at_ms: T0 + 3_300,
      finished_at_ms: T0 + 3_500,
    });
    const obs = failoverObservations().map((o) =>
      o.kind === 'status' && o.status.recoveries.length > 0 ? { ...o, status: { ...o.status, recoveries: [rec] } } : o,
    );
    // Adopted tasks finished more splits while there was no leader: 14 finished when it answers.
    obs.splice(9, 1, {
      kind: 'status',
      atMs: T0 + 3_700,
      leader: jm2,
      status: status('RUNNING', [source(14, 4), sum()], { leader_epoch: 2, recoveries: [rec] }),
    });
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    const finishedSeen: number[] = [];
    for (const o of obs) {
      model.observe(o);
      const header = renderWatch(model.view(), { width: 120, color: false, nowMs: o.atMs })[0]!;
      const m = / (\d+)\/\d+\+? tasks/.exec(header);
      if (m) finishedSeen.push(Number(m[1]));
    }
    // Never back: the finished count only grows from one frame to the next.
    expect(finishedSeen).toEqual([...finishedSeen].sort((a, b) => a - b));
    expect(finishedSeen).toContain(14);
    const running = renderWatch(model.view(), { width: 300, color: false, nowMs: T0 + 9_000 });
    expect(running.join('\n')).toContain('no finished work lost; running tasks adopted: 6.');
    const mid = new WatchModel('0123456789abcdef0123456789abcdef');
    for (const o of obs.slice(0, 10)) mid.observe(o);
    const lines = renderWatch(mid.view(), { width: 200, color: false, nowMs: T0 + 3_700 });
    expect(lines[1]).toMatch(/ 14\/18 {2}RUNNING 4 running$/);
    const last = obs.at(-1)!;
    expect(last.kind === 'status' && endLine(last.status)).toContain(
      'after 1 JobMaster failover: 12 finished tasks kept, 0 rerun, 6 running tasks adopted, 1.2 MiB of partitions reused',
    );
  });

  it('never draws a line wider than the terminal, wide characters and colours included', () => {
    const obs = failoverObservations();
    obs.push({
      kind: 'status',
      atMs: T0 + 9_500,
      leader: jm2,
      status: status('RUNNING', [vertex('数据源: 文本文件 -> 分词 -> 映射', 4, 'RUNNING', 1, 3), sum()], {
        name: 'wörtercount λόγος 数据 🚀',
        recoveries: [
          recovery({
            epoch: 2,
            restarted_from_scratch: true,
            reason: 'replaying the job events failed (codec): bad record',
          }),
        ],
      }),
    });
    for (const width of [30, 40, 80, 120]) {
      for (let i = 1; i <= obs.length; i++) {
        const model = new WatchModel('0123456789abcdef0123456789abcdef');
        for (const o of obs.slice(0, i)) model.observe(o);
        for (const color of [false, true]) {
          for (const l of renderWatch(model.view(), { width, color, nowMs: T0 + 10_000 }))
            expect(displayWidth(l), l).toBeLessThanOrEqual(width);
        }
      }
    }
  });
});

describe('TtyProgress', () => {
  it('leaves exactly the current block on screen through a whole failover', () => {
    for (const columns of [80, 120, 50]) {
      const screen = new FakeScreen(columns);
      screen.write('$ rebound watch 0123\n');
      const model = new WatchModel('0123456789abcdef0123456789abcdef');
      let now = 0;
      const tty = new TtyProgress(screen, true, () => now);
      for (const o of failoverObservations()) {
        now = o.atMs;
        feed(tty, model, o);
        const expected = renderWatch(model.view(), { width: columns, color: false, nowMs: now });
        expect(screen.lines()).toEqual(['$ rebound watch 0123', ...expected.map((l) => l.trimEnd())]);
      }
      tty.finish();
      expect(screen.lines().join('\n')).not.toMatch(/NO LEADER|TAKING OVER|epoch 1\)/);
    }
  });

  it('redraws from a clean screen when the terminal is resized', () => {
    const screen = new FakeScreen(120);
    let listener: (() => void) | undefined;
    const out = Object.assign(screen, { on: (_e: 'resize', l: () => void) => (listener = l), off: () => undefined });
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    const tty = new TtyProgress(out, false, () => T0 + 3_500);
    for (const o of failoverObservations().slice(0, 9)) feed(tty, model, o);
    screen.columns = 60;
    // A real terminal re-wraps what was drawn: simulate that by drawing the old block at the new width.
    listener?.();
    const expected = renderWatch(model.view(), { width: 60, color: false, nowMs: T0 + 3_500 });
    expect(screen.lines()).toEqual(expected.map((l) => l.trimEnd()));
  });
});

describe('PlainProgress', () => {
  it('prints one line per change: progress lines and failover events, never the gap counter', () => {
    let out = '';
    const plain = new PlainProgress({ write: (t: string) => (out += t) });
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    for (const o of failoverObservations()) feed(plain, model, o);
    const lines = out.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('job ')).map((l) => l.split(' | ')[0])).toEqual([
      'job 0123456789abcdef0123456789abcdef RUNNING 6/18+ tasks',
      'job 0123456789abcdef0123456789abcdef RUNNING 12/18+ tasks',
      'job 0123456789abcdef0123456789abcdef RECONCILING 12/18+ tasks',
      'job 0123456789abcdef0123456789abcdef RUNNING 12/18+ tasks',
      'job 0123456789abcdef0123456789abcdef FINISHED 19/19 tasks',
    ]);
    expect(lines.some((l) => l.includes('CREATED 0/0'))).toBe(false);
    expect(lines.filter((l) => l.startsWith('leader lost'))).toHaveLength(1);
    expect(out).toMatch(/leader changed: epoch 2 at 127\.0\.0\.1:4002/);
  });

  it('summarizes a status in one line', () => {
    const s = status('RUNNING', [vertex('Source', 4, 'RUNNING', 1), vertex('Sink', 2, 'CREATED', 0)]);
    expect(progressLine(s)).toBe(
      'job 0123456789abcdef0123456789abcdef RUNNING 1/6 tasks | Source 1/4 RUNNING | Sink 0/2 CREATED',
    );
  });
});

describe('watch --json', () => {
  it('writes JSON Lines on stdout and events on stderr', () => {
    let out = '';
    let err = '';
    const json = new JsonLinesProgress({ write: (t: string) => (out += t) }, { write: (t: string) => (err += t) });
    const model = new WatchModel('0123456789abcdef0123456789abcdef');
    for (const o of failoverObservations()) feed(json, model, o);
    const states = out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { state: string }).state);
    expect(states).toEqual(['RUNNING', 'RUNNING', 'RECONCILING', 'RUNNING', 'FINISHED']);
    expect(err).toContain('leader lost');
  });

  it('uses camelCase keys in proto order and fills missing task counts', () => {
    const s = status('RUNNING', [{ ...vertex('Source', 1, 'CREATED', 0), tasks: null }]);
    const json = jobStatusToJson(s);
    expect(Object.keys(json)).toEqual([
      'jobId',
      'name',
      'state',
      'vertices',
      'submittedAtMs',
      'finishedAtMs',
      'failure',
      'restarts',
      'leaderEpoch',
      'recoveries',
      'notes',
      'jobRecoveryDisabled',
      'shuffleType',
    ]);
    expect(json.vertices[0]?.tasks.finished).toBe(0);
  });
});
