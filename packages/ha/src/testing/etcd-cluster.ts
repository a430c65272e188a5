/**
 * A real etcd for tests: an installed `etcd` binary (3.4 or later), one or three members on random loopback
 * ports, each in its own directory under a temporary directory. Used by the etcd backend's tests
 * and by the multi-host scenarios (`@rebound/ha/testing`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type EtcdTestUser,
  type EtcdTlsFiles,
  enableEtcdAuth,
  httpsHealthy,
  makeEtcdTlsFiles,
} from './etcd-security.js';

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
  /**
   * Client TLS: https:// client URLs with a certificate of a CA made for the test; with
   * `clientCertAuth`, etcd also requires a client certificate of that CA (--client-cert-auth).
   */
  readonly tls?: boolean;
  readonly clientCertAuth?: boolean;
  /** etcd auth enabled once the cluster is healthy, with a user `rebound` (see `user`). */
  readonly auth?: boolean;
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
  /** The TLS files of a cluster started with `tls`. */
  readonly tls: EtcdTlsFiles | undefined;
  /** The etcd user of a cluster started with `auth`. */
  readonly user: EtcdTestUser | undefined;
  /**
   * The configuration a Rebound process needs for this etcd: endpoints, and the credential keys
   * (high-availability.etcd.username, password-file, tls.*) when it has auth or TLS.
   */
  clientConfig(): Record<string, string>;
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

async function healthy(clientUrl: string, tls?: EtcdTlsFiles): Promise<boolean> {
  if (tls) return httpsHealthy(clientUrl, tls, (p) => readFileSync(p));
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { health?: string };
    return body.health === 'true';
  } catch {
    return false;
  }
}

async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  detail: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms: ${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts the cluster, again with other ports when a member could not bind one: free ports are
 * picked and released for etcd to bind, and another process can take one in between.
 */
export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdClusterOnce(options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (attempt >= 3 || !message.includes('address already in use')) throw err;
    }
  }
}

async function startEtcdClusterOnce(options: EtcdClusterOptions): Promise<EtcdCluster> {
  const n = options.members ?? 1;
  const host = options.host ?? '127.0.0.1';
  const binary = options.binary ?? process.env.REBOUND_ETCD_BIN ?? DEFAULT_ETCD_BINARY;
  const baseDir = options.baseDir ?? (await mkdtemp(join(tmpdir(), 'rebound-etcd-')));
  const ownsBase = options.baseDir === undefined;
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const tls = options.tls || options.clientCertAuth ? await makeEtcdTlsFiles(join(baseDir, 'tls'), host) : undefined;
  // Clients reach a TLS member by name, as they would a real one: a certificate for an IP address
  // works, but Node warns on stderr about an IP as TLS server name, which would garble one-line errors.
  const clientHost = tls && host === '127.0.0.1' ? 'localhost' : host;
  const specs: { name: string; clientUrl: string; listenClientUrl: string; peerUrl: string; dataDir: string }[] = [];
  for (let i = 0; i < n; i++) {
    const clientPort = await freePort(host);
    const peerPort = await freePort(host);
    specs.push({
      name: `m${i}`,
      clientUrl: `${tls ? 'https' : 'http'}://${clientHost}:${clientPort}`,
      listenClientUrl: `${tls ? 'https' : 'http'}://${host}:${clientPort}`,
      peerUrl: `http://${host}:${peerPort}`,
      dataDir: join(baseDir, `m${i}`),
    });
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
        '--name',
        s.name,
        '--data-dir',
        s.dataDir,
        '--listen-client-urls',
        s.listenClientUrl,
        '--advertise-client-urls',
        s.clientUrl,
        '--listen-peer-urls',
        s.peerUrl,
        '--initial-advertise-peer-urls',
        s.peerUrl,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        token,
        '--heartbeat-interval',
        String(options.heartbeatMs ?? 100),
        '--election-timeout',
        String(options.electionTimeoutMs ?? 1000),
        '--log-level',
        'warn',
        '--logger',
        'zap',
        ...(tls ? ['--cert-file', tls.serverCertFile, '--key-file', tls.serverKeyFile] : []),
        ...(tls && options.clientCertAuth ? ['--client-cert-auth', '--trusted-ca-file', tls.caFile] : []),
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

  let user: EtcdTestUser | undefined;
  const cluster: EtcdCluster = {
    get members(): EtcdMember[] {
      return specs.map(({ listenClientUrl: _, ...s }, i) => ({ ...s, pid: children[i]?.pid }));
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
      await waitFor(
        `etcd member ${specs[i]!.name} healthy again`,
        startTimeoutMs,
        () => healthy(specs[i]!.listenClientUrl, tls),
        () => logs[i]!.slice(-2_000),
      );
    },
    stopAll: async () => {
      process.removeListener('exit', onExit);
      await Promise.all(specs.map((_, i) => kill(i)));
      if (ownsBase) await rm(baseDir, { recursive: true, force: true });
    },
    log: (i) => logs[i] ?? '',
    tls,
    get user() {
      return user;
    },
    clientConfig: () => ({
      'high-availability.etcd.endpoints': specs.map((s) => s.clientUrl).join(','),
      ...(tls ? { 'high-availability.etcd.tls.ca-file': tls.caFile } : {}),
      ...(tls && options.clientCertAuth
        ? { 'high-availability.etcd.tls.cert-file': tls.certFile, 'high-availability.etcd.tls.key-file': tls.keyFile }
        : {}),
      ...(user
        ? {
            'high-availability.etcd.username': user.username,
            'high-availability.etcd.password-file': user.passwordFile,
          }
        : {}),
    }),
  };

  try {
    // A data directory from an attempt that could not bind would hold that attempt's peer URLs.
    await Promise.all(specs.map((s) => rm(s.dataDir, { recursive: true, force: true })));
    for (let i = 0; i < n; i++) launch(i);
    // A member of a 3-member cluster is healthy only once a quorum elected a raft leader.
    await Promise.all(
      specs.map((s, i) =>
        waitFor(
          `etcd member ${s.name} healthy`,
          startTimeoutMs,
          () => healthy(s.listenClientUrl, tls),
          () => logs[i]!.slice(-2_000),
        ),
      ),
    );
    if (options.auth) {
      const etcdctl = process.env.REBOUND_ETCDCTL_BIN ?? join(dirname(binary), 'etcdctl');
      user = await enableEtcdAuth(etcdctl, cluster.endpointList, tls, join(baseDir, 'auth'));
    }
  } catch (err) {
    await cluster.stopAll();
    throw err;
  }
  return cluster;
}
