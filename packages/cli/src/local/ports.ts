import { createServer } from 'node:net';

import { type HighAvailabilityServices } from '@rebound/ha';
import { type ClusterProcess, type ProcessRole } from '../cluster-file.js';

// HTTP ports of a local cluster: which REST port each JobMaster gets, and the URL it advertises.

/** The first JobMaster's REST API and dashboard, as Flink's and the compose file's. */
export const FIRST_REST_PORT = '8081';

/**
 * Each daemon of a local cluster gets its own HTTP port: the JobMasters rest.port (default 8081)
 * plus their number minus one (jm-2 gets 8082), TaskManagers and shuffle workers any free one
 * unless metrics.port (shuffle-worker.metrics.port) is configured (then offset the same way). A
 * restarted daemon keeps its port.
 */
export function httpPortFor(
  role: ProcessRole,
  id: string,
  config: Readonly<Record<string, string>>,
): Record<string, string> {
  const key =
    role === 'jobmaster' ? 'rest.port' : role === 'taskmanager' ? 'metrics.port' : 'shuffle-worker.metrics.port';
  const base = config[key] ?? (role === 'jobmaster' ? FIRST_REST_PORT : undefined);
  if (base === undefined || Number(base) === 0) return { [key]: '0' };
  const n = Number(/-(\d+)$/.exec(id)?.[1] ?? 1);
  return { [key]: String(Number(base) + Math.max(0, n - 1)) };
}

/** The REST or metrics URL a daemon published through the HA services (absent for older daemons). */
export async function withHttpUrl(ha: HighAvailabilityServices, p: ClusterProcess): Promise<ClusterProcess> {
  const ep = await ha
    .endpoints()
    .read(p.id)
    .catch(() => undefined);
  if (!ep || ep.pid !== p.pid) return p;
  return {
    ...p,
    ...(ep.restUrl ? { restUrl: ep.restUrl } : {}),
    ...(ep.metricsUrl ? { metricsUrl: ep.metricsUrl } : {}),
  };
}

/** Whether `port` on `host` can be bound now: a first look, so a taken port costs no failed start. */
function portLooksFree(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => done(true)));
  });
}

export const REST_PORT_TAKEN = /rest\.port \d+ .*already in use/;

/**
 * The REST port a JobMaster is started with: its own (8081, 8082, ...) unless something already
 * listens there, then any free one, with a line saying so. The daemon's own bind is the real
 * test: a port taken between the look and the bind restarts it on a free one (see startDaemons).
 */
export async function restPortOrFree(
  spec: { role: ProcessRole; id: string },
  config: Readonly<Record<string, string>>,
  notes: string[],
): Promise<Record<string, string>> {
  const port = httpPortFor(spec.role, spec.id, config);
  const wanted = Number(port['rest.port'] ?? 0);
  if (spec.role !== 'jobmaster' || wanted === 0) return port;
  if (await portLooksFree(config['rest.bind-address'] ?? '127.0.0.1', wanted)) return port;
  notes.push(portTakenNote(spec.id, wanted));
  return { 'rest.port': '0' };
}

export function portTakenNote(id: string, port: number): string {
  return `${id}: port ${port} is taken, so its REST API and dashboard are on a free port (HTTP column); -D rest.port=N picks the first port`;
}
