import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, ReboundError, fsyncDir } from '@rebound/core';

/** One sink subtask's output: the finished attempt's temporary file and where it goes. */
export interface CommitEntry {
  temp: string;
  final: string;
}

export interface CommitManifest {
  jobId: string;
  entries: CommitEntry[];
  /** Output directories, for _SUCCESS and removal of stale parts. */
  directories: string[];
}

export function sinkTempFile(outputDir: string, jobId: string, vertexId: string, subtask: number, attempt: number, epoch: number): string {
  return join(outputDir, '.rebound-tmp', jobId, `${vertexId}-${subtask}-a${attempt}-e${epoch}`);
}

export function sinkFinalFile(outputDir: string, subtask: number): string {
  return join(outputDir, `part-${String(subtask).padStart(5, '0')}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Test hooks into a commit (crash points, and tests that interrupt it half-way). */
export interface CommitHooks {
  /** Called after each rename this call performed, with how many it performed so far. */
  afterRename?(renamed: number): void;
}

/**
 * Applies a commit manifest. Idempotent: a leader that died half-way through a commit leaves
 * the manifest in the HA directory and the next leader applies it again, so each finished
 * attempt's output appears exactly once, whatever failed on the way.
 */
export async function applyCommit(manifest: CommitManifest, hooks: CommitHooks = {}): Promise<void> {
  const finals = new Set(manifest.entries.map((e) => e.final));
  let renamed = 0;
  for (const e of manifest.entries) {
    if (await exists(e.temp)) {
      await rename(e.temp, e.final);
      hooks.afterRename?.(++renamed);
    } else if (!(await exists(e.final))) {
      throw new ReboundError(ErrorCode.INTERNAL, `sink output ${e.temp} of a finished task is missing; cannot commit ${e.final}`);
    }
  }
  for (const dir of manifest.directories) {
    await mkdir(dir, { recursive: true });
    // Parts of an earlier run with a higher parallelism must not survive next to this run's.
    for (const name of await readdir(dir)) {
      if (name.startsWith('part-') && !finals.has(join(dir, name))) await rm(join(dir, name), { force: true });
    }
    await writeFile(join(dir, '_SUCCESS'), '');
    await rm(join(dir, '.rebound-tmp', manifest.jobId), { recursive: true, force: true });
    // Other jobs may still write into .rebound-tmp; remove it only when empty.
    await rmdir(join(dir, '.rebound-tmp')).catch(() => undefined);
    await fsyncDir(dir);
  }
}
