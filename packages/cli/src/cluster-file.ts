import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { IllegalStateError, ReboundError, sleep, writeFileAtomic } from '@rebound/core';
import { ClusterNotFoundError } from './errors.js';
import { isProcessAlive } from './processes.js';

export type ProcessRole = 'jobmaster' | 'taskmanager' | 'shuffle-worker';

const ROLES: readonly ProcessRole[] = ['jobmaster', 'taskmanager', 'shuffle-worker'];

/** One daemon of a local cluster as `rebound local` started it. */
export interface ClusterProcess {
  readonly id: string;
  readonly role: ProcessRole;
  readonly pid: number;
  readonly address: string;
  readonly logFile: string;
  /** TaskManagers and shuffle workers. */
  readonly dataDir?: string;
  /** TaskManagers only. */
  readonly slots?: number;
  readonly startedAtMs: number;
  /** JobMasters: REST API, dashboard and /metrics. */
  readonly restUrl?: string;
  /** TaskManagers and shuffle workers: Prometheus /metrics. */
  readonly metricsUrl?: string;
}

/** `<workdir>/cluster.json`: what `rebound local` knows about the cluster it started. */
export interface ClusterFile {
  readonly haDir: string;
  readonly processes: readonly ClusterProcess[];
  /** The `-D` values every daemon was started with (also the client's configuration). */
  readonly config: Readonly<Record<string, string>>;
  /** Default slots of TaskManagers added later with `local start-taskmanager`. */
  readonly slots: number;
}

export { DEFAULT_WORKDIR } from './names.js';

export const ClusterPaths = {
  file: (workdir: string): string => join(workdir, 'cluster.json'),
  lock: (workdir: string): string => join(workdir, 'cluster.json.lock'),
  haDir: (workdir: string): string => join(workdir, 'ha'),
  /** The cluster secret every RPC carries (security.auth.token-file), mode 0600. */
  secret: (workdir: string): string => join(workdir, 'secret'),
  logsDir: (workdir: string): string => join(workdir, 'logs'),
  logFile: (workdir: string, id: string): string => join(workdir, 'logs', `${id}.log`),
  /** Where a daemon's stdout goes; `local` reads the ready line from it. */
  outFile: (workdir: string, id: string): string => join(workdir, 'logs', `${id}.out`),
  dataDir: (workdir: string, id: string): string => join(workdir, 'data', id),
} as const;

function invalid(path: string, why: string): ReboundError {
  return new IllegalStateError(`${path} is not a valid cluster file (${why}); remove it or use another --cluster`);
}

function parseProcess(path: string, raw: unknown, index: number): ClusterProcess {
  const o = raw as Record<string, unknown>;
  if (typeof o !== 'object' || o === null) throw invalid(path, `processes[${index}] is not an object`);
  const { id, role, pid, address, logFile, dataDir, slots, startedAtMs, restUrl, metricsUrl } = o;
  if (typeof id !== 'string' || id === '') throw invalid(path, `processes[${index}].id is missing`);
  if (!ROLES.includes(role as ProcessRole)) throw invalid(path, `processes[${index}].role is not ${ROLES.join(', ')}`);
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) throw invalid(path, `processes[${index}].pid is not a pid`);
  if (typeof address !== 'string') throw invalid(path, `processes[${index}].address is missing`);
  if (typeof logFile !== 'string') throw invalid(path, `processes[${index}].logFile is missing`);
  return {
    id,
    role: role as ProcessRole,
    pid: pid as number,
    address,
    logFile,
    ...(typeof dataDir === 'string' ? { dataDir } : {}),
    ...(typeof slots === 'number' ? { slots } : {}),
    startedAtMs: typeof startedAtMs === 'number' ? startedAtMs : 0,
    ...(typeof restUrl === 'string' ? { restUrl } : {}),
    ...(typeof metricsUrl === 'string' ? { metricsUrl } : {}),
  };
}

/** Validates the text of a cluster.json; `path` only names the file in errors. */
export function parseClusterFile(text: string, path: string): ClusterFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalid(path, 'not JSON');
  }
  const o = raw as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw invalid(path, 'not an object');
  if (typeof o.haDir !== 'string' || o.haDir === '') throw invalid(path, 'haDir is missing');
  if (!Array.isArray(o.processes)) throw invalid(path, 'processes is missing');
  const config: Record<string, string> = {};
  if (o.config !== undefined) {
    if (typeof o.config !== 'object' || o.config === null || Array.isArray(o.config))
      throw invalid(path, 'config is not an object');
    for (const [k, v] of Object.entries(o.config)) config[k] = String(v);
  }
  return {
    haDir: o.haDir,
    processes: o.processes.map((p, i) => parseProcess(path, p, i)),
    config,
    slots: typeof o.slots === 'number' && o.slots > 0 ? o.slots : 2,
  };
}

export function serializeClusterFile(file: ClusterFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** The cluster.json of `workdir`, or undefined when there is none. */
export async function tryReadClusterFile(workdir: string): Promise<ClusterFile | undefined> {
  const path = ClusterPaths.file(workdir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new IllegalStateError(`cannot read ${path}: ${code ?? String(err)}`);
  }
  return parseClusterFile(text, path);
}

/** `otherTargets`: the flags besides --cluster that the command takes to name a cluster (for the hint). */
export async function readClusterFile(
  workdir: string,
  otherTargets: readonly string[] = ['--ha-dir', '--address'],
): Promise<ClusterFile> {
  const file = await tryReadClusterFile(workdir);
  if (!file) {
    const dir = resolve(workdir);
    const flags = ['--cluster', ...otherTargets];
    const pass =
      otherTargets.length === 0
        ? '--cluster with the directory of another'
        : `${flags.slice(0, -1).join(', ')} or ${flags.at(-1)}`;
    throw new ClusterNotFoundError(
      `no cluster in ${dir} (no cluster.json there); start one with 'rebound local up --cluster ${dir}', or pass ${pass}`,
    );
  }
  return file;
}

export async function writeClusterFile(workdir: string, file: ClusterFile): Promise<void> {
  await writeFileAtomic(ClusterPaths.file(workdir), serializeClusterFile(file));
}

/** Adds a process, replacing an earlier one with the same id (a restart). */
export function upsertProcess(file: ClusterFile, proc: ClusterProcess): ClusterFile {
  const others = file.processes.filter((p) => p.id !== proc.id);
  return { ...file, processes: [...others, proc] };
}

const ID_PREFIX: Record<ProcessRole, string> = { jobmaster: 'jm', taskmanager: 'tm', 'shuffle-worker': 'sw' };

/** `jm-<n>` / `tm-<n>` / `sw-<n>` with n one above the highest number used so far for that role. */
export function nextProcessId(file: Pick<ClusterFile, 'processes'>, role: ProcessRole): string {
  const prefix = ID_PREFIX[role];
  let max = 0;
  for (const p of file.processes) {
    const m = new RegExp(`^${prefix}-(\\d+)$`).exec(p.id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `${prefix}-${max + 1}`;
}

export interface ClusterFileLockOptions {
  readonly timeoutMs?: number;
  /** A lock whose owner file is unreadable for this long was left by a crash mid-acquire. */
  readonly staleMs?: number;
  readonly pollMs?: number;
}

async function lockOwnerAlive(lock: string, staleMs: number): Promise<boolean> {
  const pid = Number(await readFile(join(lock, 'owner'), 'utf8').catch(() => ''));
  if (Number.isSafeInteger(pid) && pid > 0) return isProcessAlive(pid);
  // Owner not written yet (or never, after a crash between mkdir and write): judge by age.
  const age = await stat(lock).then(
    (s) => Date.now() - s.mtimeMs,
    () => 0,
  );
  return age <= staleMs;
}

/**
 * Serializes read-modify-write of cluster.json between concurrent `rebound local` commands
 * (e.g. a test starting two TaskManagers at once). mkdir is atomic on every local file system;
 * a lock whose owning process is gone is taken over.
 */
export async function withClusterFileLock<T>(
  workdir: string,
  fn: () => Promise<T>,
  opts: ClusterFileLockOptions = {},
): Promise<T> {
  const lock = ClusterPaths.lock(workdir);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const staleMs = opts.staleMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  await mkdir(workdir, { recursive: true });
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, 'owner'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!(await lockOwnerAlive(lock, staleMs))) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new IllegalStateError(`another 'rebound local' command holds ${lock}; wait for it to finish`);
      }
      await sleep(opts.pollMs ?? 50);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
