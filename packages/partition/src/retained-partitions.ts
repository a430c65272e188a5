import { readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, type Logger } from '@rebound/core';
import type { FinishedPartition } from './block-sink.js';
import { DATA_FILE, INDEX_FILE, keyOf, partitionDir } from './format.js';
import { finishedPartitionOf, parseIndexFile } from './index-file.js';

/**
 * Loads into `finished` every finished partition under `root` whose index is whole and agrees
 * with its data file; deletes everything else (unfinished partitions, a torn or foreign index, a
 * truncated data file, stray files). The blocks' checksums are checked when they are read.
 */
export async function retainFinishedPartitions(
  root: string,
  dataDir: string,
  finished: Map<string, FinishedPartition>,
  logger: Logger,
): Promise<void> {
  let kept = 0;
  let dropped = 0;
  const drop = async (path: string, reason: string): Promise<void> => {
    dropped++;
    logger.warn({ dir: path, reason }, 'deleting a partition left by an earlier process');
    await rm(path, { recursive: true, force: true });
  };
  for (const job of await readdir(root, { withFileTypes: true })) {
    const jobDir = join(root, job.name);
    if (!job.isDirectory()) {
      await drop(jobDir, 'not a job directory');
      continue;
    }
    for (const entry of await readdir(jobDir, { withFileTypes: true })) {
      const dir = join(jobDir, entry.name);
      const reason = entry.isDirectory() ? await loadFinished(dir, dataDir, finished) : 'not a partition directory';
      if (reason === undefined) kept++;
      else await drop(dir, reason);
    }
    await rmdir(jobDir).catch(() => {}); // only when nothing of the job was kept
  }
  logger.info(
    { dir: root, kept, dropped, jobs: new Set([...finished.values()].map((p) => p.id.job_id)).size },
    'kept the finished partitions of an earlier process',
  );
}

/** Registers the finished partition in `dir`; returns why it cannot be kept otherwise. */
async function loadFinished(
  dir: string,
  dataDir: string,
  finished: Map<string, FinishedPartition>,
): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, INDEX_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'unfinished: it has no index';
    return `its index cannot be read: ${errorMessage(err)}`;
  }
  let p: FinishedPartition;
  try {
    const index = parseIndexFile(text, 'its index');
    const expected = partitionDir(dataDir, index.partitionId);
    if (expected !== dir)
      return `its index names partition ${keyOf(index.partitionId)}, whose directory is ${expected}`;
    const size = (await stat(join(dir, DATA_FILE))).size;
    if (size !== index.dataBytes) return `its data file has ${size} bytes, but the index says ${index.dataBytes}`;
    p = finishedPartitionOf(index, dir);
  } catch (err) {
    return errorMessage(err);
  }
  if (finished.has(p.key)) return `partition ${p.key} is already loaded`;
  finished.set(p.key, p);
  return undefined;
}
