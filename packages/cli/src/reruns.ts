import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ClusterTarget } from './cluster-target.js';
import type { RerunSubtask } from './recovery-text.js';

/** A `task.deploy` line of a TaskManager log (pino JSON). */
interface DeployLine {
  readonly event?: unknown;
  readonly jobId?: unknown;
  readonly vertexName?: unknown;
  readonly subtask?: unknown;
  readonly epoch?: unknown;
  readonly time?: unknown;
}

/**
 * Subtasks of `jobId` deployed more than once, by the epoch of the leader that deployed them
 * again, from the TaskManager logs of a local cluster. The status RPC counts reruns but does not
 * name them; the TaskManagers log every deployment with the deploying leader's epoch.
 */
export function rerunsFromLogs(logTexts: readonly string[], jobId: string): Map<number, RerunSubtask[]> {
  const deploys: { vertex: string; subtask: number; epoch: number; time: number }[] = [];
  for (const text of logTexts) {
    for (const line of text.split('\n')) {
      if (!line.includes('"task.deploy"') || !line.includes(jobId)) continue;
      let e: DeployLine;
      try {
        e = JSON.parse(line) as DeployLine;
      } catch {
        continue;
      }
      if (
        e.event !== 'task.deploy' ||
        e.jobId !== jobId ||
        typeof e.vertexName !== 'string' ||
        typeof e.subtask !== 'number'
      )
        continue;
      deploys.push({
        vertex: e.vertexName,
        subtask: e.subtask,
        epoch: typeof e.epoch === 'number' ? e.epoch : 0,
        time: typeof e.time === 'number' ? e.time : 0,
      });
    }
  }
  deploys.sort((a, b) => a.time - b.time);
  const seen = new Set<string>();
  const byEpoch = new Map<number, RerunSubtask[]>();
  for (const d of deploys) {
    const key = `${d.vertex}#${d.subtask}`;
    if (seen.has(key)) {
      const list = byEpoch.get(d.epoch) ?? [];
      if (!list.some((s) => s.vertex === d.vertex && s.subtask === d.subtask))
        list.push({ vertex: d.vertex, subtask: d.subtask });
      byEpoch.set(d.epoch, list);
    }
    seen.add(key);
  }
  return byEpoch;
}

/** For a local cluster target: its TaskManager logs; otherwise (no logs at hand) none. */
export async function localReruns(
  target: ClusterTarget,
  jobId: string,
): Promise<Map<number, RerunSubtask[]> | undefined> {
  if (target.kind !== 'cluster') return undefined;
  const files = target.file.processes
    .filter((p) => p.role === 'taskmanager')
    .map((p) => resolve(target.workdir, p.logFile));
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8').catch(() => '')));
  return rerunsFromLogs(texts, jobId);
}
