/**
 * A real etcd for tests: Debian's `etcd` binary (3.4), one or three members on random loopback
 * ports, each in its own directory under a temporary directory. Used by the etcd backend's tests
 * and by the multi-host scenarios (`@rebound/ha/testing`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  /** undefined while the member is killed. */
  readonly pid: number | undefined;
}

export interface EtcdClusterOptions {
  readonly members?: 1 | 3;
  /** The etcd binary (default $REBOUND_ETCD_BIN or /usr/bin/etcd). */
  readonly binary?: string;
  /** Raft heartbeat / election timeout in ms (default 100 / 1000, etcd's defaults). */
  readonly heartbeatMs?: number;
  readonly electionTimeoutMs?: number;
  /** Host the members listen on (default 127.0.0.1; a netns test passes its bridge address). */
  readonly host?: string;
  /** How long to wait for the cluster to become healthy (default 30 s). */
  readonly startTimeoutMs?: number;
  /** Where the members' directories go (default a new temporary directory, removed by stopAll). */
  readonly baseDir?: string;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  /** Client URLs of all members. */
  readonly endpoints: readonly string[];
  /** `high-availability.etcd.endpoints` for this cluster. */
  readonly endpointList: string;
  readonly baseDir: string;
  /** SIGKILLs member `i`; its data stays, so startMember brings it back with its state. */
  killMember(i: number): Promise<void>;
  /** Starts a killed member again (same ports and data). */
  startMember(i: number): Promise<void>;
  /** Sends a signal to member `i` (SIGSTOP / SIGCONT to freeze it without losing its connections). */
  signalMember(i: number, signal: NodeJS.Signals): void;
  /** SIGKILLs every member and removes the temporary directory. */
  stopAll(): Promise<void>;
  /** The member's log so far (for failure messages). */
  log(i: number): string;
}

export const DEFAULT_ETCD_BINARY = '/usr/bin/etcd';

/** Whether an etcd binary can be run here (tests skip, saying so, when not and CI is unset). */
export function etcdAvailable(binary = process.env.REBOUND_ETCD_BIN ?? DEFAULT_ETCD_BINARY): boolean {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /etcd Version: 3\./.test(r.stdout);
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function healthy(clientUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { health?: string };
    return body.health === 'true';
  } catch {
    return false;
  }
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, detail: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms: ${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const n = options.members ?? 1;
  const host = options.host ?? '127.0.0.1';
  const binary = options.binary ?? process.env.REBOUND_ETCD_BIN ?? DEFAULT_ETCD_BINARY;
  const baseDir = options.baseDir ?? (await mkdtemp(join(tmpdir(), 'rebound-etcd-')));
  const ownsBase = options.baseDir === undefined;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const specs: { name: string; clientUrl: string; peerUrl: string; dataDir: string }[] = [];
  for (let i = 0; i < n; i++) {
    const clientPort = await freePort(host);
    const peerPort = await freePort(host);
    specs.push({ name: `m${i}`, clientUrl: `http://${host}:${clientPort}`, peerUrl: `http://${host}:${peerPort}`, dataDir: join(baseDir, `m${i}`) });
  }
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const children: (ChildProcess | undefined)[] = specs.map(() => undefined);
  const logs: string[] = specs.map(() => '');
  const token = `rebound-test-${process.pid}-${Date.now()}`;

  const launch = (i: number): void => {
    const s = specs[i]!;
    const child = spawn(
      binary,
      [
        '--name', s.name,
        '--data-dir', s.dataDir,
        '--listen-client-urls', s.clientUrl,
        '--advertise-client-urls', s.clientUrl,
        '--listen-peer-urls', s.peerUrl,
        '--initial-advertise-peer-urls', s.peerUrl,
        '--initial-cluster', initialCluster,
        '--initial-cluster-state', 'new',
        '--initial-cluster-token', token,
        '--heartbeat-interval', String(options.heartbeatMs ?? 100),
        '--election-timeout', String(options.electionTimeoutMs ?? 1000),
        '--log-level', 'warn',
        '--logger', 'zap',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const append = (b: Buffer): void => {
      logs[i] = (logs[i]! + b.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    child.on('error', (err) => append(Buffer.from(`spawn failed: ${err.message}\n`)));
    children[i] = child;
  };

  const kill = async (i: number): Promise<void> => {
    const child = children[i];
    children[i] = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };

  // A test run that dies without stopAll() must not leave etcd members behind.
  const onExit = (): void => {
    for (const c of children) c?.kill('SIGKILL');
  };
  process.once('exit', onExit);

  const cluster: EtcdCluster = {
    get members(): EtcdMember[] {
      return specs.map((s, i) => ({ ...s, pid: children[i]?.pid }));
    },
    endpoints: specs.map((s) => s.clientUrl),
    endpointList: specs.map((s) => s.clientUrl).join(','),
    baseDir,
    killMember: (i) => kill(i),
    signalMember: (i, signal) => {
      children[i]?.kill(signal);
    },
    startMember: async (i) => {
      if (children[i]) return;
      launch(i);
      await waitFor(`etcd member ${specs[i]!.name} healthy again`, startTimeoutMs, () => healthy(specs[i]!.clientUrl), () => logs[i]!.slice(-2_000));
    },
    stopAll: async () => {
      process.removeListener('exit', onExit);
      await Promise.all(specs.map((_, i) => kill(i)));
      if (ownsBase) await rm(baseDir, { recursive: true, force: true });
    },
    log: (i) => logs[i] ?? '',
  };

  try {
    for (let i = 0; i < n; i++) launch(i);
    // A member of a 3-member cluster is healthy only once a quorum elected a raft leader.
    await Promise.all(specs.map((s, i) => waitFor(`etcd member ${s.name} healthy`, startTimeoutMs, () => healthy(s.clientUrl), () => logs[i]!.slice(-2_000))));
  } catch (err) {
    await cluster.stopAll();
    throw err;
  }
  return cluster;
}
