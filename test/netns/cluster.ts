/**
 * A Rebound cluster whose JobMasters and TaskManagers each run on a host of their own (a network
 * namespace, see network.ts): every RPC and every partition read crosses a veth and the bridge.
 * Daemons bind and advertise their host's address (jobmaster.bind-host / taskmanager.bind-host,
 * rest.bind-address); the HA directory, the job files and the output are on the filesystem all
 * namespaces share, as a DFS would be. The test process is a client host of its own on the bridge.
 *
 * The work directory has the layout of `rebound local` (cluster.json, secret, logs/, data/, ha/),
 * so the CLI (`submit --cluster`, `status`, ...) and the cluster.json readers work unchanged.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  ClusterClient,
  ClusterPaths,
  clientConfiguration,
  clientOptionsFrom,
  haServicesOf,
  isProcessAlive,
  jobStatusToJson,
  signalProcess,
  type ClusterFile,
  type ClusterProcess,
  type JobStatusJson,
  type ProcessRole,
} from '@rebound/cli';
import { Configuration, type ClusterOverview__Output } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices, type LeaderInfo } from '@rebound/ha';
import { REBOUND_BIN, REPO_ROOT, TEST_CONFIG, TerminalStateError, parseTaskEvents, runRebound, waitFor, type CliResult, type TaskEvent } from '../harness.js';
import { makeTempDir } from '../util.js';
import { EtcdHosts } from './etcd.js';
import { HostNetwork, mountInProcess, type Host } from './network.js';

export interface NetnsClusterOptions {
  readonly jobmasters?: number;
  readonly taskmanagers?: number;
  readonly slots?: number;
  /** On top of TEST_CONFIG; every daemon and the client get it. */
  readonly config?: Readonly<Record<string, string>>;
  /** How long start-up may take (default 120 s: etcd, then the JobMasters, then the TaskManagers, on a loaded machine). */
  readonly startTimeoutMs?: number;
  /**
   * Members of an etcd cluster to start first, each on a host of its own, and use as the HA
   * backend (`high-availability.type=etcd`); 0 or absent: file HA in the shared HA directory.
   */
  readonly etcdMembers?: number;
  /**
   * Daemons that bind the wildcard address and advertise their host's address through
   * jobmaster.rpc.address / taskmanager.host (the others bind their host's address itself).
   */
  readonly wildcardBind?: readonly string[];
}

export interface NetnsProcess extends ClusterProcess {
  readonly host: Host;
}

export class NetnsCluster {
  readonly haDir: string;
  /** Where job modules and event logs are (high-availability.storageDir: the HA directory here). */
  readonly storageDir: string;
  private readonly procs = new Map<string, NetnsProcess>();
  private readonly hostsById = new Map<string, Host>();
  private readonly storageCut = new Set<string>();
  private client: ClusterClient | undefined;
  private ha: HighAvailabilityServices | undefined;
  private stopped = false;
  private failed = false;

  private constructor(
    readonly net: HostNetwork,
    readonly workdir: string,
    readonly config: Readonly<Record<string, string>>,
    private readonly slots: number,
    /** The etcd cluster of the HA backend, when it is etcd. */
    readonly etcd: EtcdHosts | undefined,
    private readonly wildcardBind: ReadonlySet<string>,
  ) {
    this.haDir = ClusterPaths.haDir(workdir);
    this.storageDir = this.haDir;
  }

  static async start(opts: NetnsClusterOptions = {}): Promise<NetnsCluster> {
    const workdir = await makeTempDir('rebound-netns-');
    const secret = ClusterPaths.secret(workdir);
    await writeFile(secret, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    await mkdir(ClusterPaths.haDir(workdir), { recursive: true });
    await mkdir(ClusterPaths.logsDir(workdir), { recursive: true });
    const config = { ...TEST_CONFIG, 'security.auth.token-file': secret, ...opts.config };
    const net = HostNetwork.create();
    let etcd: EtcdHosts | undefined;
    try {
      if (opts.etcdMembers) {
        etcd = await EtcdHosts.start(net, join(workdir, 'etcd'), opts.etcdMembers);
        Object.assign(config, {
          'high-availability.type': 'etcd',
          'high-availability.etcd.endpoints': etcd.endpoints,
          'high-availability.cluster-id': `netns-${process.pid}`,
        });
      }
    } catch (err) {
      net.destroy();
      throw err;
    }
    const cluster = new NetnsCluster(net, workdir, config, opts.slots ?? 2, etcd, new Set(opts.wildcardBind ?? []));
    try {
      const deadline = Date.now() + (opts.startTimeoutMs ?? 120_000);
      const jms = Array.from({ length: opts.jobmasters ?? 2 }, (_, i) => `jm-${i + 1}`);
      await Promise.all(jms.map((id) => cluster.startDaemon('jobmaster', id, deadline)));
      await cluster.waitFor(async () => cluster.leader(), deadline - Date.now(), 'a leader to be elected');
      const tms = Array.from({ length: opts.taskmanagers ?? 3 }, (_, i) => `tm-${i + 1}`);
      await Promise.all(tms.map((id) => cluster.startDaemon('taskmanager', id, deadline)));
      await cluster.waitForTaskManagers(tms, deadline - Date.now());
    } catch (err) {
      cluster.markFailed();
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  markFailed(): void {
    this.failed = true;
  }

  host(id: string): Host {
    const h = this.hostsById.get(id);
    if (!h) throw new Error(`no host for ${id}`);
    return h;
  }

  process(id: string): NetnsProcess {
    const p = this.procs.get(id);
    if (!p) throw new Error(`no process ${id}`);
    return p;
  }

  processes(): NetnsProcess[] {
    return [...this.procs.values()];
  }

  /**
   * Starts (or restarts) daemon `id` on its own host, created on first start; resolves once it
   * printed its ready line. A restarted daemon keeps its host, address family and data directory.
   */
  async startDaemon(role: ProcessRole, id: string, deadline = Date.now() + 60_000, extra: Readonly<Record<string, string>> = {}): Promise<NetnsProcess> {
    const host = this.hostsById.get(id) ?? this.net.addHost(id);
    this.hostsById.set(id, host);
    const logFile = ClusterPaths.logFile(this.workdir, id);
    const outFile = ClusterPaths.outFile(this.workdir, id);
    const dataDir = role === 'taskmanager' ? ClusterPaths.dataDir(this.workdir, id) : undefined;
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    const wildcard = this.wildcardBind.has(id);
    const own: Record<string, string> =
      role === 'jobmaster'
        ? { 'jobmaster.bind-host': wildcard ? '0.0.0.0' : host.ip, ...(wildcard ? { 'jobmaster.rpc.address': host.ip } : {}), 'rest.bind-address': host.ip, 'rest.port': '0' }
        : { 'taskmanager.bind-host': wildcard ? '0.0.0.0' : host.ip, ...(wildcard ? { 'taskmanager.host': host.ip } : {}), 'metrics.port': '0' };
    const args = [REBOUND_BIN, role, '--ha-dir', this.haDir, '--id', id, '--log-file', logFile];
    if (dataDir) args.push('--slots', String(this.slots), '--data-dir', dataDir);
    for (const [k, v] of Object.entries({ ...this.config, ...own, ...extra })) args.push('-D', `${k}=${v}`);
    const out = openSync(outFile, 'w');
    const err = openSync(logFile, 'a');
    // `ip netns exec` execs node in place: the child's pid is the daemon's, leading its own group.
    const child = spawn('ip', ['netns', 'exec', host.netns, process.execPath, ...args], { detached: true, stdio: ['ignore', out, err], cwd: REPO_ROOT });
    closeSync(out);
    closeSync(err);
    child.unref();
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
    const pid = child.pid ?? -1;
    const address = await waitFor(
      async () => {
        if (exited || (pid > 0 && !isProcessAlive(pid))) {
          const words = (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith('rebound: ')).pop();
          throw new TerminalStateError(`${role} ${id} ${exited ?? 'exited'} before it was ready: ${words ?? 'no last words'} (log ${logFile})`);
        }
        for (const line of (await readFile(outFile, 'utf8').catch(() => '')).split('\n')) {
          if (!line.startsWith('{')) continue;
          const o = JSON.parse(line) as { event?: string; id?: string; address?: string };
          if (o.event === 'ready' && o.id === id && o.address) return o.address;
        }
        return undefined;
      },
      Math.max(1_000, deadline - Date.now()),
      `${role} ${id} on ${host.netns} (${host.ip}) to be ready`,
    );
    const proc: NetnsProcess = { id, role, pid, address, logFile, host, startedAtMs: Date.now(), ...(dataDir ? { dataDir, slots: this.slots } : {}) };
    this.procs.set(id, proc);
    await this.writeClusterFile();
    return proc;
  }

  private async writeClusterFile(): Promise<void> {
    const file: ClusterFile = {
      haDir: this.haDir,
      processes: this.processes().map(({ host: _host, ...p }) => p),
      config: this.config,
      slots: this.slots,
    };
    await writeFile(ClusterPaths.file(this.workdir), `${JSON.stringify(file, null, 2)}\n`);
  }

  private async target() {
    const file = JSON.parse(await readFile(ClusterPaths.file(this.workdir), 'utf8')) as ClusterFile;
    return { kind: 'cluster' as const, workdir: this.workdir, haDir: this.haDir, file };
  }

  private async clusterClient(): Promise<ClusterClient> {
    if (!this.client) {
      const target = await this.target();
      this.client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    }
    return this.client;
  }

  waitFor<T>(predicate: () => T | Promise<T>, timeoutMs: number, what: string): Promise<Exclude<T, undefined | false | null>> {
    return waitFor(predicate, timeoutMs, what);
  }

  async waitForTaskManagers(ids: readonly string[], timeoutMs: number): Promise<ClusterOverview__Output> {
    return this.waitFor(
      async () => {
        const o = await this.overview();
        const registered = new Set(o.task_managers.map((t) => t.task_manager_id));
        return ids.every((id) => registered.has(id)) ? o : undefined;
      },
      timeoutMs,
      `TaskManagers ${ids.join(', ')} to be registered with the leader`,
    );
  }

  async overview(): Promise<ClusterOverview__Output> {
    return (await this.clusterClient()).getClusterOverview();
  }

  async status(jobId: string): Promise<JobStatusJson> {
    return jobStatusToJson(await (await this.clusterClient()).getJobStatus(jobId));
  }

  async waitForJob(jobId: string, timeoutMs: number): Promise<JobStatusJson> {
    return this.waitFor(
      async () => {
        const s = await this.status(jobId);
        if (s.state === 'FINISHED') return s;
        if (s.state === 'FAILED' || s.state === 'CANCELED') throw new TerminalStateError(`job ${jobId} ended ${s.state}${s.failure ? `: ${s.failure}` : ''}`);
        return undefined;
      },
      timeoutMs,
      `job ${jobId} to finish`,
    );
  }

  /** HA services of this cluster's backend, for the test itself (close them after use). */
  haServices(): HighAvailabilityServices {
    return createHaServices(Configuration.of({ ...this.config }), this.haDir);
  }

  /** The leader the HA backend records (leader.json, or etcd's leader key), as clients see it. */
  async leader(): Promise<LeaderInfo | undefined> {
    this.ha ??= haServicesOf(await this.target());
    return this.ha.getLeader();
  }

  /** Runs the CLI in the test's own namespace, against this cluster (`--cluster <workdir>`). */
  rebound(command: string, args: readonly string[], timeoutMs = 120_000): Promise<CliResult> {
    return runRebound([command, '--cluster', this.workdir, ...args], { timeoutMs });
  }

  /** Submits a job module detached; resolves with its id. */
  async submit(jobFile: string, jobArgs: readonly string[], config: Readonly<Record<string, string>> = {}): Promise<string> {
    const defines = Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
    const r = await this.rebound('submit', [resolve(REPO_ROOT, jobFile), '--json', '--detached', ...defines, '--', ...jobArgs]);
    const first = r.stdout.split('\n').find((l) => l.startsWith('{'));
    const jobId = first ? (JSON.parse(first) as { jobId?: string }).jobId : undefined;
    if (!jobId) throw new Error(`rebound submit exited ${r.code ?? r.signal}: ${r.stderr.trim() || r.stdout.trim()}`);
    return jobId;
  }

  /** Task lifecycle events from the TaskManager logs. */
  async taskEvents(): Promise<TaskEvent[]> {
    const tms = this.processes().filter((p) => p.role === 'taskmanager');
    const all = await Promise.all(tms.map(async (p) => parseTaskEvents(await readFile(p.logFile, 'utf8').catch(() => ''), p.id)));
    return all.flat().sort((a, b) => a.time - b.time);
  }

  async log(id: string): Promise<string> {
    return readFile(ClusterPaths.logFile(this.workdir, id), 'utf8').catch(() => '');
  }

  isAlive(id: string): boolean {
    const p = this.procs.get(id);
    return p !== undefined && isProcessAlive(p.pid, p.id);
  }

  /** Sends `signal` to daemon `id`; for SIGKILL/SIGTERM waits until it is gone. */
  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const p = this.process(id);
    if (!isProcessAlive(p.pid, p.id) || !signalProcess(p.pid, signal)) throw new Error(`cannot send ${signal} to ${id} (pid ${p.pid}): not running`);
    if (signal === 'SIGKILL' || signal === 'SIGTERM') await this.waitFor(() => !isProcessAlive(p.pid, p.id), 30_000, `${id} to exit after ${signal}`);
  }

  /**
   * Cuts the host of `id` off the network (its packets are dropped). With `storage`, its view of
   * the shared HA directory goes too, as when the HA directory is a network mount the partition
   * cuts: an empty read-only tmpfs is mounted over it in the daemon's private mount namespace
   * (what it opened before keeps working, as an NFS file handle would until it times out).
   */
  partition(id: string, opts: { storage?: boolean } = {}): void {
    this.net.partition(this.host(id));
    if (opts.storage) {
      mountInProcess(this.process(id).pid, ['mount', '-t', 'tmpfs', '-o', 'ro,size=64k', 'rebound-partitioned', this.haDir]);
      this.storageCut.add(id);
    }
  }

  heal(id: string): void {
    if (this.storageCut.delete(id) && this.isAlive(id)) mountInProcess(this.process(id).pid, ['umount', this.haDir]);
    this.net.heal(this.host(id));
  }

  /** Stops every daemon (SIGTERM, then SIGKILL), deletes the namespaces, and the work directory unless a test failed. */
  async stop(opts: { keepWorkdir?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.client?.close();
    this.client = undefined;
    await this.ha?.close().catch(() => {});
    this.ha = undefined;
    for (const id of [...this.storageCut]) {
      try {
        this.heal(id);
      } catch {
        // Its process is gone; the mount went with its namespace.
      }
    }
    const alive = this.processes().filter((p) => isProcessAlive(p.pid, p.id));
    for (const p of alive) {
      signalProcess(p.pid, 'SIGCONT');
      signalProcess(p.pid, 'SIGTERM');
    }
    await waitFor(() => alive.every((p) => !isProcessAlive(p.pid, p.id)), 10_000, 'the daemons to stop').catch(() => {
      for (const p of alive) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGKILL');
    });
    this.etcd?.stop();
    this.net.destroy();
    const keep = opts.keepWorkdir || this.failed || process.env.REBOUND_KEEP_WORKDIR === '1';
    if (keep) process.stderr.write(`rebound netns test: keeping work directory ${this.workdir}\n`);
    else await rm(this.workdir, { recursive: true, force: true });
  }
}

/** Where a job's input and output go: on the filesystem every host shares. */
export function sharedDir(cluster: NetnsCluster, name: string): string {
  return join(cluster.workdir, 'shared', name);
}
