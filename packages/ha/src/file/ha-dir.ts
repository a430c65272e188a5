import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HaDirInvalidError } from '@rebound/core';

/**
 * The layout of the HA directory shared by JobMasters, TaskManagers and CLI clients. Every path
 * into `--ha-dir` is spelled here, so the contract lives in one place.
 */
export const HaPaths = {
  lockDir: (haDir: string): string => join(haDir, 'leader.lock'),
  lockOwner: (haDir: string): string => join(haDir, 'leader.lock', 'owner.json'),
  leader: (haDir: string): string => join(haDir, 'leader.json'),
  epochsDir: (haDir: string): string => join(haDir, 'epochs'),
  jobsDir: (haDir: string): string => join(haDir, 'jobs'),
  jobDir: (haDir: string, jobId: string): string => join(haDir, 'jobs', jobId),
} as const;

/** Marker that writeFileAtomic puts in the names of its temporary files. */
export const TMP_MARKER = '.tmp-';

export function isErrno(err: unknown, ...codes: string[]): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && codes.includes(code);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return false;
    throw err;
  }
}

/**
 * Fails fast, with the fix in the message, when a client points at an HA directory that no
 * JobMaster has ever used: otherwise it would wait for a leader that can never appear.
 */
export async function assertHaDirInitialized(haDir: string): Promise<void> {
  const fix = `no JobMaster has ever led there; start a JobMaster with --ha-dir ${haDir} first or fix the path`;
  let isDir: boolean;
  try {
    isDir = (await stat(haDir)).isDirectory();
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) {
      throw new HaDirInvalidError(`HA directory ${haDir} does not exist: ${fix}`);
    }
    throw new HaDirInvalidError(
      `HA directory ${haDir} cannot be read (${(err as Error).message}); fix its permissions or the path`,
      { cause: err },
    );
  }
  if (!isDir) {
    throw new HaDirInvalidError(`HA directory ${haDir} is not a directory: fix the --ha-dir path`);
  }
  if (!(await exists(HaPaths.leader(haDir))) && !(await exists(HaPaths.epochsDir(haDir)))) {
    throw new HaDirInvalidError(`HA directory ${haDir} holds neither leader.json nor epochs/: ${fix}`);
  }
}
