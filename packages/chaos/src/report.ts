import type { FaultKind } from './faults.js';
import type { Outcome, RunResult } from './runner.js';
import type { RecoveryClass } from './results.js';

export interface ChaosSummary {
  readonly runs: number;
  readonly passed: number;
  /** Passed runs that tested a recovery: a fault with finished work, before the job ended. */
  readonly correctRecoveries: number;
  /** Passed runs by what they tested (only 'recovered' is a correct recovery). */
  readonly passedBy: Partial<Record<RecoveryClass, number>>;
  readonly failed: number;
  readonly outcomes: Partial<Record<Outcome, number>>;
  /** Planned / injected, per fault kind. */
  readonly faults: Partial<Record<FaultKind, { planned: number; injected: number }>>;
  readonly tasks: {
    readonly finishedBeforeFault: number;
    readonly kept: number;
    readonly rerun: number;
    readonly rerunNotDurable: number;
    readonly rerunTaskManagerDied: number;
    readonly rerunExcused: number;
    readonly rerunDurableTaskManagerLived: number;
  };
  readonly recoveryMs: {
    readonly count: number;
    readonly median?: number;
    readonly p95?: number;
    readonly max?: number;
  };
  readonly spontaneousFailovers: number;
  /** Running tasks at leader kills and pauses, by keep-running-tasks (issue 21). */
  readonly runningTasks: {
    readonly on: RunningSummary;
    readonly off: RunningSummary;
  };
}

export interface RunningSummary {
  readonly runs: number;
  readonly runningAtFault: number;
  readonly redeployed: number;
  readonly redeployedOnLiveTaskManager: number;
}

function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

export function summarize(results: readonly RunResult[]): ChaosSummary {
  const outcomes: Partial<Record<Outcome, number>> = {};
  const faults: Partial<Record<FaultKind, { planned: number; injected: number }>> = {};
  const tasks = {
    finishedBeforeFault: 0,
    kept: 0,
    rerun: 0,
    rerunNotDurable: 0,
    rerunTaskManagerDied: 0,
    rerunExcused: 0,
    rerunDurableTaskManagerLived: 0,
  };
  const recoveries: number[] = [];
  const running = {
    on: { runs: 0, runningAtFault: 0, redeployed: 0, redeployedOnLiveTaskManager: 0 },
    off: { runs: 0, runningAtFault: 0, redeployed: 0, redeployedOnLiveTaskManager: 0 },
  };
  let spontaneous = 0;
  const passedBy: Partial<Record<RecoveryClass, number>> = {};
  for (const r of results) {
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    if (r.outcome === 'ok') passedBy[r.recovery ?? 'not-injected'] = (passedBy[r.recovery ?? 'not-injected'] ?? 0) + 1;
    for (const f of r.faults) {
      const e = (faults[f.kind] ??= { planned: 0, injected: 0 });
      e.planned++;
      if (f.injected) e.injected++;
    }
    if (r.tasks) {
      tasks.finishedBeforeFault += r.tasks.finishedBeforeFault;
      tasks.kept += r.tasks.kept;
      tasks.rerun += r.tasks.rerun;
      tasks.rerunExcused += r.tasks.rerunExcused;
      tasks.rerunDurableTaskManagerLived += r.tasks.violations;
      for (const x of r.tasks.reruns) {
        if (!x.taskManagerLived) tasks.rerunTaskManagerDied++;
        else if (!x.durable) tasks.rerunNotDurable++;
      }
    }
    if (r.runningTasks && r.keepRunningTasks !== undefined) {
      const s = running[r.keepRunningTasks ? 'on' : 'off'];
      s.runs++;
      s.runningAtFault += r.runningTasks.runningAtFault;
      s.redeployed += r.runningTasks.redeployed;
      s.redeployedOnLiveTaskManager += r.runningTasks.redeployedOnLiveTaskManager;
    }
    recoveries.push(...r.observedRecoveryMs);
    spontaneous += r.spontaneousFailovers;
  }
  recoveries.sort((a, b) => a - b);
  const passed = outcomes.ok ?? 0;
  return {
    runs: results.length,
    passed,
    correctRecoveries: passedBy.recovered ?? 0,
    passedBy,
    failed: results.length - passed,
    outcomes,
    faults,
    tasks,
    recoveryMs: {
      count: recoveries.length,
      ...(recoveries.length > 0
        ? { median: quantile(recoveries, 0.5)!, p95: quantile(recoveries, 0.95)!, max: recoveries.at(-1)! }
        : {}),
    },
    spontaneousFailovers: spontaneous,
    runningTasks: running,
  };
}

/**
 * What a batch proves. Only 'passed' is a pass: every requested run ran, none failed, and at
 * least one fault was injected. A batch cut short by its time budget ('partial') or in which no
 * fault was injected ('inconclusive') tested less than it was asked to, whatever its runs say.
 */
export type BatchVerdict = 'passed' | 'failed' | 'partial' | 'inconclusive';

export interface BatchOutcome {
  readonly verdict: BatchVerdict;
  /** The last line `npm run chaos` prints. */
  readonly line: string;
  /** 0 passed, 1 failed, 3 partial or inconclusive (2 is a bad command line). */
  readonly exitCode: number;
}

export function batchOutcome(s: ChaosSummary, requestedRuns: number, seed: number): BatchOutcome {
  const injected = Object.values(s.faults).reduce((n, f) => n + (f?.injected ?? 0), 0);
  if (s.failed > 0)
    return { verdict: 'failed', exitCode: 1, line: `chaos: ${s.failed} of ${s.runs} run(s) FAILED (seed ${seed})` };
  if (s.runs < requestedRuns)
    return {
      verdict: 'partial',
      exitCode: 3,
      line: `chaos: PARTIAL, not passed: ${s.runs} of ${requestedRuns} requested run(s) ran before the time budget ran out, none failed (seed ${seed})`,
    };
  if (injected === 0)
    return {
      verdict: 'inconclusive',
      exitCode: 3,
      line: `chaos: INCONCLUSIVE, not passed: no fault was injected in ${s.runs} run(s) (seed ${seed})`,
    };
  return { verdict: 'passed', exitCode: 0, line: `chaos: all ${s.runs} run(s) passed (seed ${seed})` };
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** One row per run: what was injected, the verdict, tasks kept vs rerun, recovery times. */
export function tableRows(results: readonly RunResult[]): string[][] {
  return results.map((r) => {
    const t = r.tasks;
    const faults = r.faults.map((f) => `${f.description}${f.injected ? '' : ' (not injected)'}`).join(' + ');
    let rerun = '-';
    if (t) {
      const died = t.reruns.filter((x) => !x.taskManagerLived).length;
      const notDurable = t.reruns.filter((x) => x.taskManagerLived && !x.durable).length;
      const parts = [
        notDurable ? `${notDurable} not durable` : '',
        died ? `${died} TM died` : '',
        t.rerunExcused ? `${t.rerunExcused} excused` : '',
        t.violations ? `${t.violations} BAD` : '',
      ].filter(Boolean);
      rerun = `${t.rerun}${parts.length ? ` (${parts.join(', ')})` : ''}`;
    }
    const rt = r.runningTasks;
    const running = rt && rt.runningAtFault > 0 ? `${rt.runningAtFault - rt.redeployed}/${rt.runningAtFault}` : '-';
    return [
      String(r.run),
      String(r.seed),
      r.shuffle ? `${r.job} (${r.shuffle})` : r.job,
      r.keepRunningTasks === undefined ? '-' : r.keepRunningTasks ? 'on' : 'off',
      faults,
      r.outcome === 'ok' && r.recovery && r.recovery !== 'recovered' ? `ok (${r.recovery})` : r.outcome,
      t ? `${t.kept}/${t.finishedBeforeFault}` : '-',
      rerun,
      running,
      r.observedRecoveryMs.length ? r.observedRecoveryMs.map(secs).join(' ') : '-',
      secs(r.durationMs),
    ];
  });
}

/** KR: keep-running-tasks; RUNNING KEPT: running at a leader kill or pause and not redeployed / running then. */
export const TABLE_HEADER = [
  'RUN',
  'SEED',
  'JOB',
  'KR',
  'FAULTS',
  'OUTCOME',
  'KEPT',
  'RERUN',
  'RUNNING KEPT',
  'RECOVERY',
  'TIME',
];

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

export function summaryLines(s: ChaosSummary): string[] {
  const outcomes = Object.entries(s.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const faults = Object.entries(s.faults)
    .map(([k, v]) => `${k} ${v!.injected}/${v!.planned}`)
    .join(', ');
  const t = s.tasks;
  const rec = s.recoveryMs;
  return [
    `runs: ${s.runs}, passed ${s.passed}, failed ${s.failed} (${outcomes})`,
    `correct recoveries: ${s.correctRecoveries} of ${s.passed} passed runs; passed without testing a recovery: ` +
      `${s.passedBy['no-finished-work'] ?? 0} with no finished task at the fault, ${s.passedBy['after-job-end'] ?? 0} with the fault after the job ended, ` +
      `${s.passedBy['not-injected'] ?? 0} with no fault injected, ${s.passedBy.contained ?? 0} testing containment only (poison job or forged calls, no failover)`,
    `faults injected/planned: ${faults}`,
    `finished tasks at a fault: ${t.finishedBeforeFault}; kept ${t.kept}, rerun ${t.rerun} (not durable ${t.rerunNotDurable}, TaskManager died ${t.rerunTaskManagerDied}, excused ${t.rerunExcused}, durable on a live TaskManager ${t.rerunDurableTaskManagerLived})`,
    ...(['on', 'off'] as const).map((k) => {
      const x = s.runningTasks[k];
      return `keep-running-tasks ${k} (${x.runs} runs): ${x.runningAtFault} tasks running at a leader kill or pause, ${x.redeployed} redeployed, ${x.redeployedOnLiveTaskManager} of them on a live TaskManager`;
    }),
    `recovery (leader loss to running again): ${rec.count} recoveries${rec.count ? `, median ${secs(rec.median!)}, p95 ${secs(rec.p95!)}, max ${secs(rec.max!)}` : ''}`,
    ...(s.spontaneousFailovers ? [`spontaneous failovers (no fault injected): ${s.spontaneousFailovers}`] : []),
  ];
}

/** The Markdown report committed as bench/results/chaos-latest.md. */
export function renderMarkdown(doc: {
  command: string;
  startedAt: string;
  wallTimeMs: number;
  requestedRuns: number;
  results: readonly RunResult[];
  summary: ChaosSummary;
  environment: string;
  verdict: BatchVerdict;
}): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const rows = tableRows(doc.results);
  const lines = [
    `# Chaos harness results (${doc.results.length} run${doc.results.length === 1 ? '' : 's'})`,
    '',
    `- command: \`${doc.command}\``,
    `- started: ${doc.startedAt}; wall time ${secs(doc.wallTimeMs)}; ${doc.results.length} of ${doc.requestedRuns} requested runs completed`,
    `- verdict: ${doc.verdict}`,
    `- environment: ${doc.environment}`,
    '',
    '## Summary',
    '',
    ...summaryLines(doc.summary).map((l) => `- ${l}`),
    '',
    '## Runs',
    '',
    `| ${TABLE_HEADER.join(' | ')} |`,
    `|${TABLE_HEADER.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
    '',
  ];
  const failed = doc.results.filter((r) => r.outcome !== 'ok');
  if (failed.length > 0) {
    lines.push('## Failures', '');
    for (const r of failed) {
      lines.push(`### run ${r.run} (seed ${r.seed}): ${r.outcome}`, '', `replay: \`${r.replay}\``, '');
      for (const p of r.problems) lines.push(`- ${esc(p)}`);
      lines.push('');
    }
  }
  const warned = doc.results.filter((r) => r.warnings.length > 0);
  if (warned.length > 0) {
    lines.push('## Warnings', '');
    for (const r of warned) for (const w of r.warnings) lines.push(`- run ${r.run} (seed ${r.seed}): ${esc(w)}`);
    lines.push('');
  }
  return lines.join('\n');
}
