import { createServer, type Server } from 'node:net';

/** A port held by a server that accepts nothing, as another program holding it would. */
export interface HeldPort {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Holds `preferred` on 127.0.0.1, or a free port when something else holds `preferred` already
 * (another cluster on the machine): the caller asserts the behaviour for whichever port it got.
 */
export async function holdPort(preferred: number): Promise<HeldPort> {
  const listen = (port: number): Promise<Server> =>
    new Promise((resolve, reject) => {
      const server = createServer((socket) => socket.destroy());
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve(server));
    });
  const server = await listen(preferred).catch(() => listen(0));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The HTTP column of `rebound local up`'s process table: process id to its URL's port. */
export function httpPortsOf(upOutput: string): Map<string, number> {
  const lines = upOutput.split('\n').map((l) => l.trim());
  const header = lines.findIndex((l) => /^ID\s+ROLE\s+PID\s+ADDRESS\s+HTTP\s+LOG$/.test(l));
  if (header < 0) throw new Error(`no process table in:\n${upOutput}`);
  const ports = new Map<string, number>();
  for (const row of lines.slice(header + 1)) {
    const [id, , , , http] = row.split(/\s{2,}/);
    const port = /^http:\/\/127\.0\.0\.1:(\d+)$/.exec(http ?? '')?.[1];
    if (id && port) ports.set(id, Number(port));
  }
  return ports;
}

/** The line `local up` prints for a JobMaster whose REST port was taken. */
export const portTakenLine = (id: string, port: number): string =>
  `  note       ${id}: port ${port} is taken, so its REST API and dashboard are on a free port (HTTP column); -D rest.port=N picks the first port`;
