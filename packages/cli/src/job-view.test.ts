import { describe, expect, it } from 'vitest';
import { renderJobStatus } from './job-view.js';
import { fitSentences } from './jobs.js';
import { rerunsFromLogs } from './reruns.js';
import { groupSubtasks, recoverySentence } from './recovery-text.js';
import { JOB_ID, recovery, status, vertex } from './testing/fixtures.js';

const NOW = Date.UTC(2026, 11, 1, 9, 0, 0);

/** A wordcount that survived two JobMaster failovers: the second one lost a partition. */
function twiceRecovered() {
  return status(
    'FINISHED',
    [
      vertex('Source: TextFiles -> FlatMap -> Map', 18, 'FINISHED', 18, 0, { bytes_consumed: 0 }),
      vertex('Sum(1) -> Sink: TextFiles', 2, 'FINISHED', 2, 0, {
        parallelism_decided_adaptively: true,
        bytes_consumed: 1_234_567,
      }),
    ],
    {
      submitted_at_ms: NOW - 95_000,
      finished_at_ms: NOW - 12_000,
      leader_epoch: 3,
      recoveries: [
        recovery({
          epoch: 2,
          old_leader_last_heard_ms: NOW - 62_200,
          elected_at_ms: NOW - 60_000,
          started_at_ms: NOW - 59_900,
          finished_at_ms: NOW - 59_700,
          replay_ms: 11,
          events_replayed: 40,
          reconnect_wait_ms: 142,
          executions_recovered: 12,
          partitions_reused: 12,
          partition_bytes_reused: 1_300_000,
        }),
        recovery({
          epoch: 3,
          old_leader_last_heard_ms: NOW - 31_400,
          elected_at_ms: NOW - 29_000,
          started_at_ms: NOW - 28_900,
          finished_at_ms: NOW - 28_000,
          replay_ms: 23,
          events_replayed: 61,
          reconnect_wait_ms: 870,
          executions_recovered: 16,
          executions_reset: 1,
          partitions_reused: 16,
          partition_bytes_reused: 1_700_000,
          partitions_missing: 1,
          torn_tail_bytes_discarded: 37,
        }),
      ],
    },
  );
}

const deploy = (vertexName: string, subtask: number, epoch: number, time: number): string =>
  JSON.stringify({
    level: 30,
    time,
    event: 'task.deploy',
    jobId: JOB_ID,
    vertexName,
    subtask,
    attempt: 0,
    epoch,
    msg: 'task deployed',
  });

describe('rebound status', () => {
  it('prints a job with two recoveries as sentences with relative times', () => {
    const logs = [
      [
        ...Array.from({ length: 18 }, (_, i) => deploy('Source: TextFiles -> FlatMap -> Map', i, 1, 1 + i)),
        ...[12, 13, 14, 15, 16, 17].map((i) => deploy('Source: TextFiles -> FlatMap -> Map', i, 2, 100 + i)),
      ].join('\n'),
      [
        deploy('Sum(1) -> Sink: TextFiles', 0, 2, 200),
        deploy('Sum(1) -> Sink: TextFiles', 1, 2, 201),
        deploy('Sum(1) -> Sink: TextFiles', 1, 3, 300),
        'not json',
        '{"event":"task.finish"}',
      ].join('\n'),
    ];
    expect(renderJobStatus(twiceRecovered(), { nowMs: NOW, reruns: rerunsFromLogs(logs, JOB_ID) }).join('\n'))
      .toMatchInlineSnapshot(`
      "Job wordcount 0123456789abcdef0123456789abcdef
        state      FINISHED under leader epoch 3
        submitted  1 min 35 s ago (2026-12-01 08:58:25Z)
        ended      12.0 s ago (2026-12-01 08:59:48Z), took 1 min 23 s

        VERTEX                               PARALLELISM   STATE     TASKS  BYTES CONSUMED
        Source: TextFiles -> FlatMap -> Map  18            FINISHED  18/18  0 B
        Sum(1) -> Sink: TextFiles            2 (adaptive)  FINISHED  2/2    1.2 MiB

      Survived 2 JobMaster failovers:
        Failover 1 (epoch 2): leader lost 1 min 2 s ago → elected after 2.2 s → replay 11 ms → reconnect 142 ms; 12 finished tasks kept with 12 partitions (1.2 MiB) reused; no finished work lost.
          ran again: Source: TextFiles #12–#17
        Failover 2 (epoch 3): leader lost 31.4 s ago → elected after 2.4 s → replay 23 ms → reconnect 870 ms; 16 finished tasks kept with 16 partitions (1.6 MiB) reused; 1 finished task lost and rerun, 1 partition missing, 37 B of torn event-log tail discarded.
          ran again: Sum(1) #1"
    `);
  });

  it('on a terminal, the sentences wrap at its width and the table does not', () => {
    const lines = renderJobStatus(twiceRecovered(), { nowMs: NOW });
    const io = {
      stdout: { write: () => true, isTTY: true, columns: 80 },
      stderr: { write: () => true },
      env: {},
      cwd: '/',
    };
    const fitted = fitSentences(lines, io);
    for (const l of fitted.filter(
      (x) => !x.includes('VERTEX') && !x.includes('TextFiles ->') && !x.includes('Sum(1) ->'),
    ))
      expect(l.length, l).toBeLessThanOrEqual(80);
    expect(fitted.join(' ').replace(/\s+/g, ' ')).toBe(lines.join(' ').replace(/\s+/g, ' '));
    expect(fitSentences(lines, { ...io, stdout: { write: () => true } })).toEqual(lines);
  });

  it('without TaskManager logs (a remote cluster) says nothing about reruns', () => {
    const lines = renderJobStatus(twiceRecovered(), { nowMs: NOW });
    expect(lines.some((l) => l.includes('ran again'))).toBe(false);
    expect(lines.join('\n')).not.toMatch(/\d{13}/);
  });

  it('keep-running-tasks: names the adopted tasks, and nothing ran again', () => {
    const adopted = status(
      'RUNNING',
      [
        vertex('Source: TextFiles -> FlatMap -> Map', 4, 'RUNNING', 1, 3),
        vertex('Sum(1) -> Sink: TextFiles', 0, 'CREATED', 0, 0),
      ],
      {
        submitted_at_ms: NOW - 30_000,
        leader_epoch: 2,
        recoveries: [
          recovery({
            epoch: 2,
            old_leader_last_heard_ms: NOW - 10_000,
            elected_at_ms: NOW - 8_000,
            started_at_ms: NOW - 7_900,
            finished_at_ms: NOW - 7_000,
            replay_ms: 9,
            reconnect_wait_ms: 880,
            executions_recovered: 1,
            partitions_reused: 1,
            partition_bytes_reused: 2048,
            running_tasks_adopted: 3,
          }),
        ],
      },
    );
    const logs = [[0, 1, 2, 3].map((i) => deploy('Source: TextFiles -> FlatMap -> Map', i, 1, 1 + i)).join('\n')];
    const text = renderJobStatus(adopted, { nowMs: NOW, reruns: rerunsFromLogs(logs, JOB_ID) }).join('\n');
    expect(text).toContain(
      'Failover 1 (epoch 2): leader lost 10.0 s ago → elected after 2.0 s → replay 9 ms → reconnect 880 ms; 1 finished task kept with 1 partition (2.0 KiB) reused; no finished work lost; running tasks adopted: 3.',
    );
    expect(text).toContain('    ran again: nothing');
    // The task counts carry on from the old leader's: 1 finished, 3 running, none back to CREATED.
    expect(text).toMatch(/Source: TextFiles -> FlatMap -> Map +4 +RUNNING +1\/4/);
  });

  it('says in the header when a failover would restart the job from scratch', () => {
    const reason = 'the no-snapshot shuffle master does not support batch snapshots';
    const lines = renderJobStatus(status('RUNNING', [], { job_recovery_disabled: reason }), { nowMs: NOW });
    expect(lines).toContain(`  recovery   off: ${reason}`);
    expect(renderJobStatus(status('RUNNING', []), { nowMs: NOW }).join('\n')).not.toContain('recovery   off');
  });

  it('says what ended the reconnect wait unless everything came back', () => {
    const r = (ended: string) =>
      recoverySentence(recovery({ epoch: 2, reconnect_wait_ms: 30_000, reconnect_wait_ended: ended }), 0, NOW);
    expect(r('timeout')).toContain('reconnect 30.0 s (timed out: what did not come back runs again);');
    expect(r('holders-settled')).toContain('reconnect 30.0 s (every TaskManager answered or is gone);');
    expect(r('all-reported')).toContain('reconnect 30.0 s;');
  });

  it('says when a recovery fell back to a restart from scratch', () => {
    const r = recovery({
      epoch: 4,
      restarted_from_scratch: true,
      reason: 'replaying the job events failed (codec): bad frame',
      old_leader_last_heard_ms: NOW - 5_000,
      elected_at_ms: NOW - 3_000,
      replay_ms: 4,
    });
    expect(recoverySentence(r, 0, NOW)).toBe(
      'Failover 1 (epoch 4): leader lost 5.0 s ago → elected after 2.0 s → replay 4 ms; recovery failed (replaying the job events failed (codec): bad frame), so the job restarted from scratch.',
    );
  });
});

describe('groupSubtasks', () => {
  it('groups by vertex and collapses runs', () => {
    expect(
      groupSubtasks(
        [12, 13, 14, 15, 16, 17, 3]
          .map((subtask) => ({ vertex: 'Source: TextFiles -> FlatMap', subtask }))
          .concat([{ vertex: 'Sum(1)', subtask: 0 }]),
      ),
    ).toBe('Source: TextFiles #3, #12–#17; Sum(1) #0');
  });
});
