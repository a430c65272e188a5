import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, newInstanceId, writeFileAtomic } from '@rebound/core';

export const WORKER_ID_FILE = 'worker-id';

const SAFE_ID = /^[A-Za-z0-9._-]+$/;

/** The id a shuffle worker runs under, and whether its data directory holds it yet. */
export interface ShuffleWorkerIdentity {
  readonly id: string;
  /** A new data directory: `keepShuffleWorkerId` records the id once the worker may start. */
  readonly isNew: boolean;
}

/**
 * The id a shuffle worker on `dataDir` runs under. The leader knows a worker's partitions by its
 * id, so the data directory keeps the id it was first used with: a restart without `--id` takes
 * it up again, and a restart with another id is refused (the partitions would be announced by a
 * worker the leader never placed them on). A new data directory takes `requested`, or a fresh id;
 * nothing is written yet, so that a start refused later (no secret, no HA) claims no directory.
 */
export async function resolveShuffleWorkerId(dataDir: string, requested?: string): Promise<ShuffleWorkerIdentity> {
  if (requested !== undefined && !SAFE_ID.test(requested))
    throw new ConfigError(`shuffle worker id '${requested}' may use letters, digits, '.', '_' and '-' only`);
  const path = join(dataDir, WORKER_ID_FILE);
  let stored: string | undefined;
  try {
    stored = (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (stored !== undefined && stored !== '') {
    if (requested !== undefined && requested !== stored)
      throw new ConfigError(
        `--data-dir ${dataDir} belongs to shuffle worker ${stored}, not ${requested}; start it with --id ${stored} or use another --data-dir`,
      );
    return { id: stored, isNew: false };
  }
  return { id: requested ?? newInstanceId('sw'), isNew: true };
}

/** Records a new directory's id: from now on the directory belongs to that worker. */
export async function keepShuffleWorkerId(dataDir: string, identity: ShuffleWorkerIdentity): Promise<void> {
  if (identity.isNew) await writeFileAtomic(join(dataDir, WORKER_ID_FILE), `${identity.id}\n`);
}
