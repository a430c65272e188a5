/**
 * A real etcd cluster (the etcd on the PATH) whose members each run on a host of their own
 * (network namespaces of a HostNetwork): clients and peers reach them over the bridge, so a
 * partition of a member's host, or of every member's, is a real etcd outage. Each member listens
 * on its host's address with the standard ports (namespaces do not share ports).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../harness.js';
import type { Host, HostNetwork } from './network.js';

const CLIENT_PORT = 2379;
const PEER_PORT = 2380;

export interface EtcdMember {
  readonly name: string;
  readonly host: Host;
  readonly dataDir: string;
  readonly logFile: string;
  pid: number | undefined;
}

export function etcdUnavailableReason(): string | undefined {
  const r = spawnSync('etcd', ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (r.error || r.status !== 0) return `etcd is not installed: no etcd (3.4 or later) on the PATH`;
  return undefined;
}

export class EtcdHosts {
  private constructor(
    private readonly net: HostNetwork,
    readonly members: readonly EtcdMember[],
    private readonly token: string,
  ) {}

  /** Starts `size` members on new hosts and waits until the cluster has a leader and serves. */
  static async start(net: HostNetwork, dir: string, size = 3, timeoutMs = 60_000): Promise<EtcdHosts> {
    const members: EtcdMember[] = Array.from({ length: size }, (_, i) => {
      const name = `etcd-${i + 1}`;
      return {
        name,
        host: net.addHost(name),
        dataDir: join(dir, name),
        logFile: join(dir, `${name}.log`),
        pid: undefined,
      };
    });
    const etcd = new EtcdHosts(net, members, `rebound-${process.pid}-${net.subnet}`);
    for (const m of members) etcd.startMember(m, 'new');
    await etcd.waitHealthy(members, timeoutMs);
    return etcd;
  }

  /** `high-availability.etcd.endpoints` for this cluster. */
  get endpoints(): string {
    return this.members.map((m) => `http://${m.host.ip}:${CLIENT_PORT}`).join(',');
  }

  member(name: string): EtcdMember {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new Error(`no etcd member ${name}`);
    return m;
  }

  private startMember(m: EtcdMember, state: 'new' | 'existing'): void {
    mkdirSync(m.dataDir, { recursive: true });
    const ip = m.host.ip;
    const args = [
      '--name',
      m.name,
      '--data-dir',
      m.dataDir,
      '--listen-client-urls',
      `http://${ip}:${CLIENT_PORT}`,
      '--advertise-client-urls',
      `http://${ip}:${CLIENT_PORT}`,
      '--listen-peer-urls',
      `http://${ip}:${PEER_PORT}`,
      '--initial-advertise-peer-urls',
      `http://${ip}:${PEER_PORT}`,
      '--initial-cluster',
      this.members.map((x) => `${x.name}=http://${x.host.ip}:${PEER_PORT}`).join(','),
      '--initial-cluster-state',
      state,
      '--initial-cluster-token',
      this.token,
      // Short Raft timers: a killed member's loss, and an election, take well under a second.
      '--heartbeat-interval',
      '50',
      '--election-timeout',
      '500',
      '--logger',
      'zap',
    ];
    const log = openSync(m.logFile, 'a');
    const child = spawn('ip', ['netns', 'exec', m.host.netns, 'etcd', ...args], {
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child.unref();
    m.pid = child.pid;
  }

  /** Whether `m` answers as a healthy member (asked over the bridge, from the test's own host). */
  isHealthy(m: EtcdMember): boolean {
    const r = spawnSync(
      'etcdctl',
      ['--endpoints', `http://${m.host.ip}:${CLIENT_PORT}`, '--command-timeout=1s', 'endpoint', 'health'],
      {
        encoding: 'utf8',
        timeout: 10_000,
        env: { ...process.env, ETCDCTL_API: '3' },
      },
    );
    return r.status === 0;
  }

  /** The name of the member that is the Raft leader now, if the members answering agree on one. */
  raftLeader(): string | undefined {
    const r = spawnSync(
      'etcdctl',
      ['--endpoints', this.endpoints, '--command-timeout=2s', 'endpoint', 'status', '-w', 'json'],
      {
        encoding: 'utf8',
        timeout: 10_000,
        env: { ...process.env, ETCDCTL_API: '3' },
      },
    );
    let rows: { Endpoint?: string; Status?: { header?: { member_id?: number | string }; leader?: number | string } }[];
    try {
      rows = JSON.parse(r.stdout) as typeof rows;
    } catch {
      return undefined;
    }
    const row = rows.find(
      (x) => x.Status?.header?.member_id !== undefined && String(x.Status.header.member_id) === String(x.Status.leader),
    );
    return this.members.find((m) => row?.Endpoint === `http://${m.host.ip}:${CLIENT_PORT}`)?.name;
  }

  async waitHealthy(members: readonly EtcdMember[] = this.members, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      () => members.every((m) => this.isHealthy(m)),
      timeoutMs,
      `etcd members ${members.map((m) => m.name).join(', ')} to be healthy (logs next to their data dirs)`,
      { intervalMs: 200 },
    );
  }

  /** SIGKILLs a member (its data stays: restart() brings it back as the same member). */
  async kill(name: string): Promise<void> {
    const m = this.member(name);
    const pid = m.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    await waitFor(() => !alive(pid), 10_000, `etcd member ${name} to exit`);
    m.pid = undefined;
  }

  async restart(name: string, timeoutMs = 60_000): Promise<void> {
    const m = this.member(name);
    if (m.pid !== undefined && alive(m.pid)) return;
    this.startMember(m, 'existing');
    await this.waitHealthy([m], timeoutMs);
  }

  /** Every member's host cut off the network: etcd is unavailable to everyone, and comes back whole on heal. */
  partitionAll(): void {
    for (const m of this.members) this.net.partition(m.host);
  }

  healAll(): void {
    for (const m of this.members) this.net.heal(m.host);
  }

  /** SIGKILLs every member; the namespaces' deletion would too, this just does it first. */
  stop(): void {
    for (const m of this.members) {
      if (m.pid !== undefined && alive(m.pid)) process.kill(m.pid, 'SIGKILL');
      m.pid = undefined;
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let stat = '';
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return !/\) [ZX] /.test(stat);
}
