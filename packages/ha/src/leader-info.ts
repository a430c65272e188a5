import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, HaDirInvalidError, InternalError } from '@rebound/core';
import { HaPaths, isErrno } from './file/ha-dir.js';

/** What `<ha>/leader.json` says: who leads, where to reach it, and its fencing epoch. */
export interface LeaderInfo {
  readonly epoch: number;
  readonly jobmasterId: string;
  readonly address: string;
  readonly electedAtMs: number;
}

const EPOCH_NAME = /^\d{12}$/;

export function formatEpoch(epoch: number): string {
  return String(epoch).padStart(12, '0');
}

function parseLeader(path: string, text: string): LeaderInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new HaDirInvalidError(`${path} is not valid JSON; it is written atomically, so something else wrote it`, {
      cause: err,
    });
  }
  const o = raw as Record<string, unknown>;
  if (
    typeof o !== 'object' ||
    o === null ||
    !Number.isSafeInteger(o.epoch) ||
    (o.epoch as number) < 1 ||
    typeof o.jobmasterId !== 'string' ||
    typeof o.address !== 'string' ||
    typeof o.electedAtMs !== 'number'
  ) {
    throw new HaDirInvalidError(`${path} lacks epoch, jobmasterId, address or electedAtMs`);
  }
  return { epoch: o.epoch as number, jobmasterId: o.jobmasterId, address: o.address, electedAtMs: o.electedAtMs };
}

/** The leader recorded in `<ha>/leader.json`, or undefined when no JobMaster has led yet. */
export async function readLeader(haDir: string): Promise<LeaderInfo | undefined> {
  const path = HaPaths.leader(haDir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
    throw err;
  }
  return parseLeader(path, text);
}

/** Highest epoch allocated under `<ha>/epochs/` (0 when none). */
export async function readMaxAllocatedEpoch(haDir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(HaPaths.epochsDir(haDir));
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return 0;
    throw err;
  }
  let max = 0;
  for (const name of names) {
    if (EPOCH_NAME.test(name)) max = Math.max(max, Number(name));
  }
  return max;
}

/**
 * The newest epoch any JobMaster may act under: the highest allocated one, even if its holder has
 * not written leader.json yet. A writer whose epoch is lower has been fenced off.
 */
export async function readCurrentEpoch(haDir: string): Promise<number> {
  const [allocated, leader] = await Promise.all([readMaxAllocatedEpoch(haDir), readLeader(haDir)]);
  return Math.max(allocated, leader?.epoch ?? 0);
}

/**
 * Allocates an epoch above every one seen so far. `open(..., 'wx')` lets exactly one process own
 * each number, so two leaders can never share an epoch even if the lease lock ever fails.
 */
export async function allocateEpoch(haDir: string): Promise<number> {
  const dir = HaPaths.epochsDir(haDir);
  await mkdir(dir, { recursive: true });
  let candidate = (await readCurrentEpoch(haDir)) + 1;
  for (let tries = 0; tries < 1000; tries++, candidate++) {
    try {
      const fh = await open(join(dir, formatEpoch(candidate)), 'wx');
      await fh.close();
      await fsyncDir(dir);
      return candidate;
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
    }
  }
  throw new InternalError(`could not allocate an epoch in ${dir} after 1000 attempts`);
}
