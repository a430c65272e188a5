import { mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { ErrorCode, ReboundError, fsyncDir, InternalError } from '@rebound/core';
import type { ExecutionGraph } from './execution-graph.js';
import type { JobGraph__Output } from '@rebound/core';

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

export function sinkTempFile(
  outputDir: string,
  jobId: string,
  vertexId: string,
  subtask: number,
  attempt: number,
  epoch: number,
): string {
  return join(outputDir, '.rebound-tmp', jobId, `${vertexId}-${subtask}-a${attempt}-e${epoch}`);
}

export function sinkFinalFile(outputDir: string, subtask: number): string {
  return join(outputDir, `part-${String(subtask).padStart(5, '0')}`);
}

/** What committing a finished job renames: every sink subtask's file, written by its finished attempt. */
export function commitManifestOf(graph: ExecutionGraph): CommitManifest {
  const entries: CommitEntry[] = [];
  const dirs = new Set<string>();
  for (const ejv of graph.vertices) {
    const sink = ejv.jobVertex.sink;
    if (!sink) continue;
    dirs.add(sink.path);
    for (const ev of ejv.vertices) {
      if (!ev.sinkTempFile) throw new InternalError(`no output recorded for sink subtask ${ev.key}`);
      entries.push({ temp: ev.sinkTempFile, final: sinkFinalFile(sink.path, ev.subtask) });
    }
  }
  return { jobId: graph.jobId, entries, directories: [...dirs] };
}

/**
 * A commit manifest read back from the HA store that does not belong to the job it is stored
 * under, or points outside that job's sink directories. Applying it would rename and delete
 * files wherever its writer chose, so the takeover refuses it and fails the job.
 */
export class CommitManifestRefusedError extends ReboundError {
  constructor(jobId: string, why: string) {
    super(
      ErrorCode.HA_RECORD_REFUSED,
      `refusing the stored commit manifest of job ${jobId}: ${why}; the job's output is left as it was`,
    );
  }
}

const PART_FILE = /^part-\d{5,}$/;
const TEMP_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** The sink directories of a job, from its stored job graph. */
export function sinkDirectoriesOf(graph: JobGraph__Output): string[] {
  return [...new Set(graph.vertices.flatMap((v) => (v.sink?.path ? [resolve(v.sink.path)] : [])))];
}

/**
 * Parses a stored commit manifest of `jobId` and checks it against the job's own sink
 * directories: its job id must be `jobId`, every directory one of `sinkDirs`, every temporary
 * file `<dir>/.rebound-tmp/<jobId>/<name>` and every final file `<dir>/part-NNNNN` of those.
 */
export function parseCommitManifest(bytes: Uint8Array, jobId: string, sinkDirs: readonly string[]): CommitManifest {
  const refuse = (why: string): never => {
    throw new CommitManifestRefusedError(jobId, why);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return refuse('it is not JSON');
  }
  const m = raw as Partial<Record<keyof CommitManifest, unknown>>;
  if (typeof raw !== 'object' || raw === null) return refuse('it is not an object');
  if (m.jobId !== jobId) return refuse(`it names job ${JSON.stringify(m.jobId)}`);
  const allowed = new Set(sinkDirs.map((d) => resolve(d)));
  const sinkDir = (path: unknown, what: string): string => {
    if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) return refuse(`${what} is not a path`);
    if (!allowed.has(resolve(path)))
      return refuse(`${what} ${JSON.stringify(path)} is not a sink directory of the job`);
    return resolve(path);
  };
  const normal = (path: unknown, what: string): string =>
    typeof path === 'string' && isAbsolute(path) && resolve(path) === path && !path.includes('\0')
      ? path
      : refuse(`${what} ${JSON.stringify(path)} is not a normalized absolute path`);
  if (!Array.isArray(m.directories)) return refuse('it has no directories');
  const directories = m.directories.map((d) => sinkDir(d, 'directory'));
  if (!Array.isArray(m.entries)) return refuse('it has no entries');
  const entries = m.entries.map((e: unknown): CommitEntry => {
    const fields = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    const temp = normal(fields.temp, 'temporary file');
    const final = normal(fields.final, 'final file');
    const tempDir = dirname(temp);
    const tempSink = dirname(dirname(tempDir));
    if (!TEMP_NAME.test(basename(temp)) || tempDir !== join(tempSink, '.rebound-tmp', jobId))
      return refuse(`temporary file ${JSON.stringify(temp)} is not under <sink>/.rebound-tmp/${jobId}/`);
    sinkDir(tempSink, 'the directory of temporary file');
    if (!PART_FILE.test(basename(final))) return refuse(`final file ${JSON.stringify(final)} is not a part file`);
    sinkDir(dirname(final), 'the directory of final file');
    return { temp, final };
  });
  return { jobId, entries, directories };
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
      throw new InternalError(`sink output ${e.temp} of a finished task is missing; cannot commit ${e.final}`);
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
