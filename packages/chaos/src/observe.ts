import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, sleep, type JobSummary__Output } from '@rebound/core';
import { ChaosError } from './errors.js';
import type { RunContext } from './run-context.js';
import { subtaskKey } from './task-log.js';

/** Polls `done` every 20 ms until it holds (true), `stop` holds or the timeout passes (false). */
export async function waitUntil(
  done: () => Promise<boolean>,
  stop: () => boolean,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    if (stop()) return false;
    await sleep(20);
  }
  return false;
}

/** ListJobs from whoever leads, retried across leader changes until `timeoutMs`. */
export async function listJobs(r: RunContext, timeoutMs: number): Promise<JobSummary__Output[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await r.cluster.listJobs();
    } catch (err) {
      if (Date.now() > deadline) throw new ChaosError(`ListJobs failed for ${timeoutMs} ms: ${errorMessage(err)}`);
      await sleep(200);
    }
  }
}

export interface PartitionOnDisk {
  /** The TaskManager or shuffle worker whose disk holds it. */
  readonly holderId: string;
  readonly name: string;
  readonly dir: string;
  readonly key: string;
  readonly vertexId: string;
  readonly subtask: number;
  readonly attempt: number;
  readonly epoch: number;
}

/** Finished partitions (with an `index`) of the job on the disk of every TaskManager (or shuffle worker). */
export async function finishedPartitions(
  r: RunContext,
  role: 'taskmanager' | 'shuffle-worker' = 'taskmanager',
): Promise<PartitionOnDisk[]> {
  const out: PartitionOnDisk[] = [];
  for (const p of await r.cluster.processes()) {
    if (p.role !== role || !p.dataDir) continue;
    const jobDir = join(p.dataDir, 'partitions', r.jobId);
    for (const name of (await readdir(jobDir).catch(() => [] as string[])).sort()) {
      const dir = join(jobDir, name);
      const ok = await Promise.all([stat(join(dir, 'index')), stat(join(dir, 'data'))]).then(
        () => true,
        () => false,
      );
      // <vertexId>-<subtask>-<attempt>-e<epoch>; the vertex id may itself contain dashes.
      const m = /^(.*)-(\d+)-(\d+)-e(\d+)$/.exec(name);
      if (ok && m)
        out.push({
          holderId: p.id,
          name,
          dir,
          key: subtaskKey(m[1]!, Number(m[2])),
          vertexId: m[1]!,
          subtask: Number(m[2]),
          attempt: Number(m[3]),
          epoch: Number(m[4]),
        });
    }
  }
  return out;
}
