import { hostname } from 'node:os';
import { join } from 'node:path';
import { readFile, readdir, rm } from 'node:fs/promises';
import { writeFileAtomic } from '@rebound/core';
import { TMP_MARKER, isErrno } from './ha-dir.js';

/**
 * The HTTP endpoints of a cluster process, published in `<ha>/endpoints/<id>.json` so that every
 * JobMaster (leader or standby), the CLI and the dashboard find each other's REST and metrics URLs
 * without asking the leader (there may be none during a failover). A file outlives its process:
 * readers judge liveness themselves (`pid` on `host`).
 */
export interface ProcessEndpoint {
  readonly id: string;
  readonly role: 'jobmaster' | 'taskmanager';
  /** JobMasters: REST API, dashboard and /metrics. */
  readonly restUrl?: string;
  /** TaskManagers: Prometheus /metrics. */
  readonly metricsUrl?: string;
  /** gRPC address. */
  readonly address: string;
  readonly pid: number;
  readonly host: string;
  readonly startedAtMs: number;
}

export const ENDPOINTS_DIR = 'endpoints';

const endpointsDir = (haDir: string): string => join(haDir, ENDPOINTS_DIR);
const SAFE_ID = /^[A-Za-z0-9._-]+$/;

export async function publishEndpoint(haDir: string, ep: Omit<ProcessEndpoint, 'host' | 'pid'> & { pid?: number }): Promise<void> {
  if (!SAFE_ID.test(ep.id)) throw new Error(`process id '${ep.id}' cannot name an endpoint file`);
  const full: ProcessEndpoint = { ...ep, pid: ep.pid ?? process.pid, host: hostname() };
  await writeFileAtomic(join(endpointsDir(haDir), `${ep.id}.json`), `${JSON.stringify(full)}\n`);
}

export async function withdrawEndpoint(haDir: string, id: string): Promise<void> {
  if (!SAFE_ID.test(id)) return;
  await rm(join(endpointsDir(haDir), `${id}.json`), { force: true });
}

function parseEndpoint(text: string): ProcessEndpoint | undefined {
  try {
    const o = JSON.parse(text) as Partial<ProcessEndpoint>;
    if (typeof o.id !== 'string' || (o.role !== 'jobmaster' && o.role !== 'taskmanager')) return undefined;
    return {
      id: o.id,
      role: o.role,
      ...(typeof o.restUrl === 'string' ? { restUrl: o.restUrl } : {}),
      ...(typeof o.metricsUrl === 'string' ? { metricsUrl: o.metricsUrl } : {}),
      address: typeof o.address === 'string' ? o.address : '',
      pid: typeof o.pid === 'number' ? o.pid : 0,
      host: typeof o.host === 'string' ? o.host : '',
      startedAtMs: typeof o.startedAtMs === 'number' ? o.startedAtMs : 0,
    };
  } catch {
    return undefined;
  }
}

/** Every published endpoint, sorted by id; unreadable files are skipped. */
export async function listEndpoints(haDir: string): Promise<ProcessEndpoint[]> {
  let names: string[];
  try {
    names = await readdir(endpointsDir(haDir));
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
    throw err;
  }
  const out: ProcessEndpoint[] = [];
  for (const name of names.filter((n) => n.endsWith('.json') && !n.includes(TMP_MARKER)).sort()) {
    const ep = parseEndpoint(await readFile(join(endpointsDir(haDir), name), 'utf8').catch(() => ''));
    if (ep) out.push(ep);
  }
  return out;
}

export async function readEndpoint(haDir: string, id: string): Promise<ProcessEndpoint | undefined> {
  if (!SAFE_ID.test(id)) return undefined;
  return parseEndpoint(await readFile(join(endpointsDir(haDir), `${id}.json`), 'utf8').catch(() => ''));
}

/** Whether the process that published `ep` still runs (only knowable on its own host). */
export function endpointAlive(ep: ProcessEndpoint): boolean | undefined {
  if (ep.host !== hostname() || ep.pid <= 0) return undefined;
  try {
    process.kill(ep.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
