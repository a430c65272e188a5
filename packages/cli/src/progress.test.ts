import type { JobStatus__Output, VertexStatus__Output } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { jobStatusToJson } from './job-view.js';
import { PlainProgress, TtyProgress, progressLine, renderProgress } from './progress.js';

function vertex(name: string, parallelism: number, state: string, finished: number, running = 0): VertexStatus__Output {
  return {
    id: `v-${name}`,
    name,
    parallelism,
    state,
    tasks: { created: 0, scheduled: 0, deploying: 0, running, finished, failed: 0, canceled: 0 },
    parallelism_decided_adaptively: false,
    bytes_consumed: 0,
    bytes_produced: 0,
    records_in: 0,
    records_out: 0,
    max_parallelism: 128,
  };
}

function status(state: string, vertices: VertexStatus__Output[], extra: Partial<JobStatus__Output> = {}): JobStatus__Output {
  return {
    job_id: '0123456789abcdef0123456789abcdef',
    name: 'wordcount',
    state,
    vertices,
    submitted_at_ms: 1_000,
    finished_at_ms: 0,
    failure: '',
    restarts: 0,
    leader_epoch: 2,
    recoveries: [],
    notes: [],
    ...extra,
  };
}

describe('renderProgress', () => {
  it('draws a header and one bar per vertex', () => {
    const s = status('RUNNING', [vertex('Source', 4, 'RUNNING', 2, 2), vertex('Sum -> Sink', 0, 'CREATED', 0)]);
    expect(renderProgress(s, { width: 80, color: false })).toEqual([
      'wordcount 01234567  RUNNING  2/4+ tasks  leader epoch 2',
      `  Source       [${'█'.repeat(20)}${'░'.repeat(20)}] 2/4  RUNNING 2 running`,
      `  Sum -> Sink  [${'░'.repeat(40)}] 0/?  CREATED`,
    ]);
  });

  it('explains RECONCILING and shows the failure', () => {
    const lines = renderProgress(status('RECONCILING', [vertex('Source', 2, 'FINISHED', 2)], { failure: 'boom\nat x' }), { width: 100, color: false });
    expect(lines[0]).toContain('RECONCILING (recovering progress after a JobMaster failover)');
    expect(lines.at(-1)).toBe('  failure: boom');
  });

  it('never exceeds the terminal width without colors', () => {
    const s = status('RUNNING', [vertex('A very long vertex name that goes on and on and on', 128, 'RUNNING', 100)]);
    for (const l of renderProgress(s, { width: 50, color: false })) expect(l.length).toBeLessThanOrEqual(50);
  });

  it('colors states when asked', () => {
    const [header] = renderProgress(status('FINISHED', []), { width: 80, color: true });
    expect(header).toContain('\x1b[32mFINISHED\x1b[0m');
  });
});

describe('plain progress', () => {
  it('summarizes a status in one line', () => {
    const s = status('RUNNING', [vertex('Source', 4, 'RUNNING', 1), vertex('Sink', 2, 'CREATED', 0)]);
    expect(progressLine(s)).toBe('job 0123456789abcdef0123456789abcdef RUNNING 1/6 tasks | Source 1/4 RUNNING | Sink 0/2 CREATED');
  });

  it('prints only when something changed', () => {
    let out = '';
    const p = new PlainProgress({ write: (t: string) => (out += t) });
    const a = status('RUNNING', [vertex('Source', 2, 'RUNNING', 0)]);
    p.update(a);
    p.update({ ...a });
    p.note('leader changed: epoch 3 at 127.0.0.1:1');
    p.update(status('RUNNING', [vertex('Source', 2, 'RUNNING', 1)]));
    expect(out.trim().split('\n')).toEqual([
      'job 0123456789abcdef0123456789abcdef RUNNING 0/2 tasks | Source 0/2 RUNNING',
      'leader changed: epoch 3 at 127.0.0.1:1',
      'job 0123456789abcdef0123456789abcdef RUNNING 1/2 tasks | Source 1/2 RUNNING',
    ]);
  });
});

describe('tty progress', () => {
  it('redraws in place and keeps notes above the block', () => {
    let out = '';
    const p = new TtyProgress({ write: (t: string) => (out += t), isTTY: true, columns: 80 }, false);
    p.update(status('RUNNING', [vertex('Source', 2, 'RUNNING', 0)]));
    expect(out).not.toContain('\x1b[2A');
    out = '';
    p.update(status('RUNNING', [vertex('Source', 2, 'RUNNING', 1)]));
    expect(out.startsWith('\x1b[2A\x1b[0J')).toBe(true);
    out = '';
    p.update(status('RUNNING', [vertex('Source', 2, 'RUNNING', 1)]));
    expect(out).toBe('');
    p.note('leader changed: epoch 3 at h:1');
    expect(out).toMatch(/^\x1b\[2A\x1b\[0Jleader changed: epoch 3 at h:1\n\x1b\[2Kwordcount/);
  });
});

describe('status --json', () => {
  it('uses camelCase keys in proto order and fills missing task counts', () => {
    const s = status('RUNNING', [{ ...vertex('Source', 1, 'CREATED', 0), tasks: null }]);
    const json = jobStatusToJson(s);
    expect(Object.keys(json)).toEqual(['jobId', 'name', 'state', 'vertices', 'submittedAtMs', 'finishedAtMs', 'failure', 'restarts', 'leaderEpoch', 'recoveries', 'notes']);
    expect(json.vertices[0]?.tasks.finished).toBe(0);
  });
});
