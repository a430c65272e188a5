import { hostname } from 'node:os';
import { join } from 'node:path';
import { readFile, readdir, rm } from 'node:fs/promises';
import { ConfigError, writeFileAtomic } from '@rebound/core';
import { TMP_MARKER, isErrno } from './file/ha-dir.js';

/**
 * The HTTP endpoints of a cluster process, published through the HA services so that every
 * JobMaster (leader or standby), the CLI and the dashboard find each other's REST and metrics URLs
 * without asking the leader (there may be none during a failover).
 */
export interface ProcessEndpoint {
  readonly id: string;
  readonly role: ProcessRole;
  /** JobMasters: REST API, dashboard and /metrics. */
  readonly restUrl?: string;
  /** TaskManagers and shuffle workers: Prometheus /metrics. */
  readonly metricsUrl?: string;
  /** gRPC address. */
  readonly address: string;
  readonly pid: number;
  readonly host: string;
  readonly startedAtMs: number;
}

export const ENDPOINTS_DIR = 'endpoints';

export type ProcessRole = 'jobmaster' | 'taskmanager' | 'shuffle-worker';
const ROLES: ReadonlySet<string> = new Set<ProcessRole>(['jobmaster', 'taskmanager', 'shuffle-worker']);

const endpointsDir = (haDir: string): string => join(haDir, ENDPOINTS_DIR);
const SAFE_ID = /^[A-Za-z0-9._-]+$/;

/** What a process publishes about itself; the registry adds its pid and host. */
export type ProcessEndpointInput = Omit<ProcessEndpoint, 'host' | 'pid'> & { pid?: number };

/**
 * Where processes publish their endpoints (`HighAvailabilityServices.endpoints()`). The file
 * backend keeps them in `<ha>/endpoints/`; etcd keeps them under keys bound to a lease of the
 * publishing process, so an endpoint disappears a lease timeout after its process died.
 */
export interface EndpointRegistry {
  publish(ep: ProcessEndpointInput): Promise<void>;
  withdraw(id: string): Promise<void>;
  /** Every published endpoint, sorted by id; unreadable records are skipped. */
  list(): Promise<ProcessEndpoint[]>;
  read(id: string): Promise<ProcessEndpoint | undefined>;
  /** Whether the process behind `ep` still runs, when this registry or this host can tell. */
  alive(ep: ProcessEndpoint): boolean | undefined;
}

export function checkEndpointId(id: string): void {
  if (!SAFE_ID.test(id))
    throw new ConfigError(
      `process id '${id}' cannot name an endpoint record: use letters, digits, '.', '_' and '-' only`,
    );
}

export function completeEndpoint(ep: ProcessEndpointInput): ProcessEndpoint {
  checkEndpointId(ep.id);
  return { ...ep, pid: ep.pid ?? process.pid, host: hostname() };
}

export const encodeEndpoint = (ep: ProcessEndpoint): string => `${JSON.stringify(ep)}\n`;

export function parseEndpoint(text: string): ProcessEndpoint | undefined {
  try {
    const o = JSON.parse(text) as Partial<ProcessEndpoint>;
    if (typeof o.id !== 'string' || typeof o.role !== 'string' || !ROLES.has(o.role)) return undefined;
    return {
      id: o.id,
      role: o.role as ProcessRole,
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

/** The file backend's registry: one JSON file per process; liveness by pid, on the same host only. */
export class FileEndpointRegistry implements EndpointRegistry {
  constructor(private readonly haDir: string) {}

  async publish(ep: ProcessEndpointInput): Promise<void> {
    await writeFileAtomic(join(endpointsDir(this.haDir), `${ep.id}.json`), encodeEndpoint(completeEndpoint(ep)));
  }

  async withdraw(id: string): Promise<void> {
    if (!SAFE_ID.test(id)) return;
    await rm(join(endpointsDir(this.haDir), `${id}.json`), { force: true });
  }

  async list(): Promise<ProcessEndpoint[]> {
    let names: string[];
    try {
      names = await readdir(endpointsDir(this.haDir));
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
      throw err;
    }
    const out: ProcessEndpoint[] = [];
    for (const name of names.filter((n) => n.endsWith('.json') && !n.includes(TMP_MARKER)).sort()) {
      const ep = parseEndpoint(await readFile(join(endpointsDir(this.haDir), name), 'utf8').catch(() => ''));
      if (ep) out.push(ep);
    }
    return out;
  }

  async read(id: string): Promise<ProcessEndpoint | undefined> {
    if (!SAFE_ID.test(id)) return undefined;
    return parseEndpoint(await readFile(join(endpointsDir(this.haDir), `${id}.json`), 'utf8').catch(() => ''));
  }

  alive(ep: ProcessEndpoint): boolean | undefined {
    return pidAlive(ep);
  }
}

/** Whether the process that published `ep` still runs (only knowable on its own host). */
function pidAlive(ep: ProcessEndpoint): boolean | undefined {
  if (ep.host !== hostname() || ep.pid <= 0) return undefined;
  try {
    process.kill(ep.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
