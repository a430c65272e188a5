/** The command line of run.ts (see there). */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration } from '@rebound/core';
import { ROOT } from './cluster.js';

export type StandbyAt = 'recovered' | 'kill' | 'never';

export interface Options {
  repeat: number;
  killAt: number;
  standbyAt: StandbyAt;
  jobArgs: { splits: number; rowsPerSplit: number; recordDelayMs: number; p1: number; p2: number; keys2: number };
  taskmanagers: number;
  slots: number;
  executions: number;
  replayRuns: number;
  maxLoad: number;
  loadWaitMs: number;
  skipCluster: boolean;
  skipReplay: boolean;
  keep: boolean;
  /** Keep the other part's results from the existing results file (with --skip-cluster or --skip-replay). */
  merge: boolean;
  workdir: string;
  results: string;
}

export function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      repeat: { type: 'string', default: '1' },
      'kill-at': { type: 'string', default: '0.6' },
      'standby-at': { type: 'string', default: 'recovered' },
      splits: { type: 'string', default: '200' },
      'rows-per-split': { type: 'string', default: '200' },
      'record-delay-ms': { type: 'string', default: '3' },
      p1: { type: 'string', default: '3' },
      p2: { type: 'string', default: '2' },
      taskmanagers: { type: 'string', default: '3' },
      slots: { type: 'string', default: '2' },
      executions: { type: 'string', default: '10000' },
      'replay-runs': { type: 'string', default: '5' },
      'max-load': { type: 'string', default: '3' },
      'load-wait': { type: 'string', default: '5 min' },
      'skip-cluster': { type: 'boolean', default: false },
      'skip-replay': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      merge: { type: 'boolean', default: false },
      workdir: { type: 'string', default: '/tmp/rebound-bench-recovery' },
      results: { type: 'string', default: join(ROOT, 'bench/results/recovery.json') },
    },
    strict: true,
  });
  const int = (s: string, name: string, min: number): number => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got '${s}'`);
    return n;
  };
  const killAt = Number(values['kill-at']);
  if (!(killAt > 0 && killAt < 1)) throw new Error(`--kill-at must be in (0, 1), got '${values['kill-at']}'`);
  const standbyAt = values['standby-at'];
  if (standbyAt !== 'recovered' && standbyAt !== 'kill' && standbyAt !== 'never')
    throw new Error(`--standby-at must be recovered, kill or never`);
  return {
    repeat: int(values.repeat, 'repeat', 1),
    killAt,
    standbyAt,
    jobArgs: {
      splits: int(values.splits, 'splits', 1),
      rowsPerSplit: int(values['rows-per-split'], 'rows-per-split', 1),
      recordDelayMs: int(values['record-delay-ms'], 'record-delay-ms', 0),
      p1: int(values.p1, 'p1', 1),
      p2: int(values.p2, 'p2', 1),
      keys2: 50,
    },
    taskmanagers: int(values.taskmanagers, 'taskmanagers', 1),
    slots: int(values.slots, 'slots', 1),
    executions: int(values.executions, 'executions', 1),
    replayRuns: int(values['replay-runs'], 'replay-runs', 1),
    maxLoad: Number(values['max-load']),
    loadWaitMs: parseDuration(values['load-wait'], 'load-wait'),
    skipCluster: values['skip-cluster'],
    skipReplay: values['skip-replay'],
    keep: values.keep,
    merge: values.merge,
    workdir: resolve(values.workdir),
    results: resolve(values.results),
  };
}
