import { describe, expect, it } from 'vitest';
import { Configuration } from '@rebound/core';
import { ChaosUsageError } from './errors.js';
import { NO_CRASH_POINTS, crashPointConfig } from './faults.js';
import { USAGE, commandLine, parseChaosArgs, replayCommand } from './options.js';

function usageError(argv: string[]): string {
  try {
    parseChaosArgs(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(ChaosUsageError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
}

describe('parseChaosArgs', () => {
  it('parses a full command line', () => {
    const o = parseChaosArgs([
      '--seed',
      '7',
      '--runs',
      '3',
      '--faults',
      'leader-kill,torn-tail',
      '--job',
      'join',
      '--json',
      'out.json',
      '--deadline',
      '90 s',
    ]);
    expect(o).toMatchObject({
      seed: 7,
      runs: 3,
      faults: ['leader-kill', 'torn-tail'],
      job: 'join',
      json: 'out.json',
      deadlineMs: 90_000,
    });
  });

  it('takes --slowdown into the replay command and rejects a bad one', () => {
    const o = parseChaosArgs(['--seed', '7', '--faults', 'leader-kill', '--slowdown', '3']);
    expect(o.slowdown).toBe(3);
    expect(replayCommand(o, 9)).toBe('npm run chaos -- --seed 9 --runs 1 --faults leader-kill --slowdown 3');
    expect(parseChaosArgs(['--seed', '7', '--slowdown', '1']).slowdown).toBeUndefined();
    expect(usageError(['--seed', '1', '--slowdown', '0'])).toBe("--slowdown must be an integer >= 1, got '0'");
  });

  it('takes --keep-running-tasks into the replay command and rejects a bad one', () => {
    const o = parseChaosArgs(['--seed', '7', '--faults', 'leader-kill', '--keep-running-tasks', 'on']);
    expect(o.keepRunningTasks).toBe(true);
    expect(replayCommand(o, 9)).toBe('npm run chaos -- --seed 9 --runs 1 --faults leader-kill --keep-running-tasks on');
    expect(parseChaosArgs(['--seed', '7', '--keep-running-tasks', 'off']).keepRunningTasks).toBe(false);
    expect(parseChaosArgs(['--seed', '7']).keepRunningTasks).toBeUndefined();
    expect(usageError(['--seed', '1', '--keep-running-tasks', 'yes'])).toBe(
      "--keep-running-tasks must be on or off, got 'yes'",
    );
  });

  it('rejects unknown fault names, listing the known ones', () => {
    expect(usageError(['--seed', '1', '--faults', 'leader-kill,bogus'])).toMatch(
      /^unknown fault 'bogus'; known faults: leader-kill, crash-point/,
    );
  });

  it('rejects a seed that is not a number', () => {
    expect(usageError(['--seed', 'abc'])).toBe("--seed must be a non-negative integer, got 'abc'");
    expect(usageError(['--seed', '1.5'])).toMatch(/--seed must be a non-negative integer/);
  });

  it('rejects crash points that can never trigger', () => {
    expect(usageError(['--seed', '1', '--crash-point', 'before-event=JobFinished:1'])).toMatch(
      /can never trigger: there is no event type 'JobFinished'/,
    );
    expect(usageError(['--seed', '1', '--crash-point', 'after-event=ExecutionVertexReset:1'])).toMatch(
      /can never trigger/,
    );
    expect(
      usageError([
        '--seed',
        '1',
        '--job',
        'wordcount',
        '--crash-point',
        'before-event=ExecutionJobVertexInitialized:3',
      ]),
    ).toMatch(/can never trigger: the wordcount job has 2 vertices/);
    expect(usageError(['--seed', '1', '--crash-point', 'after-deploy=0'])).toMatch(/can never trigger/);
    expect(usageError(['--seed', '1', '--crash-point', 'during-reconciling'])).toMatch(/can never trigger/);
    expect(usageError(['--seed', '1', '--crash-point', 'sometime'])).toMatch(/is not before-event=<EventType>:<N>/);
  });

  it('accepts a crash point the JobMaster accepts, and implies the crash-point fault', () => {
    const o = parseChaosArgs(['--seed', '1', '--crash-point', 'after-event=ExecutionVertexFinished:3']);
    expect(o.faults).toEqual(['crash-point']);
    expect(() =>
      Configuration.of({ 'debug.allow-test-options': 'true', ...crashPointConfig(o.crashPoint!) }),
    ).not.toThrow();
    expect(usageError(['--seed', '1', '--faults', 'leader-kill', '--crash-point', 'after-deploy=2'])).toMatch(
      /needs the crash-point fault/,
    );
  });

  it('takes --job unique-ids into the replay command, with its one vertex', () => {
    const o = parseChaosArgs(['--seed', '7000', '--job', 'unique-ids', '--faults', 'leader-kill']);
    expect(o.job).toBe('unique-ids');
    expect(replayCommand(o, 7003)).toBe('npm run chaos -- --seed 7003 --runs 1 --faults leader-kill --job unique-ids');
    expect(
      usageError([
        '--seed',
        '1',
        '--job',
        'unique-ids',
        '--crash-point',
        'after-event=ExecutionJobVertexInitialized:2',
      ]),
    ).toMatch(/can never trigger: the unique-ids job has 1 vertex,/);
    expect(USAGE).toContain('[--job wordcount|aggregation|join|unique-ids]');
    expect(USAGE).toContain('unique-ids (only when named)');
  });

  it('clears crash points with values the configuration accepts on their own', () => {
    expect(() => Configuration.of({ ...NO_CRASH_POINTS })).not.toThrow();
  });

  it('rejects other mistakes with one line', () => {
    expect(usageError(['--runs', '0'])).toMatch(/--runs must be an integer >= 1/);
    expect(usageError(['--job', 'sort'])).toBe(
      "unknown job 'sort'; jobs: wordcount, aggregation, join (drawn per run without --job), unique-ids (only when named)",
    );
    expect(usageError(['--frobnicate'])).toMatch(/Unknown option '--frobnicate'/);
    expect(usageError(['--deadline', 'soon'])).toMatch(/--deadline: 'soon' is not a duration/);
  });

  it('takes --ha and --partitions into the replay command, and refuses kinds the run cannot inject', () => {
    const o = parseChaosArgs(['--seed', '5', '--ha', 'etcd', '--partitions', '--faults', 'etcd-outage,tm-partition']);
    expect(o).toMatchObject({ ha: 'etcd', partitions: true, faults: ['etcd-outage', 'tm-partition'] });
    expect(replayCommand(o, 6)).toBe(
      'npm run chaos -- --seed 6 --runs 1 --faults etcd-outage,tm-partition --ha etcd --partitions',
    );
    expect(parseChaosArgs(['--seed', '5'])).toMatchObject({ ha: 'file', partitions: false });
    expect(usageError(['--seed', '1', '--ha', 'zookeeper'])).toBe("--ha must be one of file, etcd, got 'zookeeper'");
    expect(usageError(['--seed', '1', '--faults', 'etcd-member-kill'])).toBe('etcd-member-kill needs --ha etcd');
    expect(usageError(['--seed', '1', '--ha', 'etcd', '--faults', 'leader-partition'])).toBe(
      'leader-partition needs --partitions',
    );
    expect(usageError(['--seed', '1', '--ha', 'etcd', '--faults', 'damaged-job-dir'])).toMatch(
      /^damaged-job-dir damages the file backend's job directory/,
    );
  });

  it('takes the remote shuffle into the replay command, and refuses what it cannot run', () => {
    const o = parseChaosArgs(['--seed', '5', '--shuffle-workers', '2', '--shuffle-replicas', '2']);
    expect(o).toMatchObject({ shuffleWorkers: 2, shuffleReplicas: 2 });
    expect(replayCommand(o, 6)).toBe('npm run chaos -- --seed 6 --runs 1 --shuffle-workers 2 --shuffle-replicas 2');
    expect(parseChaosArgs(['--seed', '5'])).toMatchObject({ shuffleWorkers: 0 });
    expect(usageError(['--shuffle-workers', '4'])).toBe('--shuffle-workers must be at most 3, got 4');
    expect(usageError(['--shuffle-replicas', '1'])).toBe(
      '--shuffle-replicas needs --shuffle-workers N (remote shuffle)',
    );
    expect(usageError(['--shuffle-workers', '1', '--shuffle-replicas', '2'])).toMatch(
      /^--shuffle-replicas 2 needs at least 2 shuffle workers/,
    );
    expect(usageError(['--faults', 'shuffle-worker-kill'])).toBe(
      'shuffle-worker-kill needs --shuffle-workers N (N >= 1)',
    );
    expect(usageError(['--shuffle-workers', '1', '--faults', 'partition-delete'])).toMatch(
      /on remote shuffle \(--shuffle-workers\) use shuffle-worker-partition-damage$/,
    );
  });

  it('prints a replay command for a single run with the same options', () => {
    const o = parseChaosArgs(['--seed', '100', '--runs', '50', '--faults', 'torn-tail', '--job', 'join']);
    expect(replayCommand(o, 117)).toBe('npm run chaos -- --seed 117 --runs 1 --faults torn-tail --job join');
    expect(parseChaosArgs(replayCommand(o, 117).split(' ').slice(4))).toMatchObject({
      seed: 117,
      runs: 1,
      faults: ['torn-tail'],
      job: 'join',
    });
    expect(commandLine(['--seed', '1', '--time-budget', '25 min'])).toBe(
      "npm run chaos -- --seed 1 --time-budget '25 min'",
    );
  });
});
