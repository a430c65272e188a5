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
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClusterPaths, isProcessAlive, type ClusterProcess, type JobStatusJson, type ProcessRole } from '@rebound/cli';
import { ClusterDriver, type CliResult, type TaskEvent } from '@rebound/cli/testing';
import { Configuration, type ClusterOverview__Output } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices, type LeaderInfo } from '@rebound/ha';
import { TEST_CONFIG } from '../harness.js';
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
  /** Shuffle workers (`sw-1`...), each on a host of its own, started after the TaskManagers. */
  readonly shuffleWorkers?: number;
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
  /** Runs the CLI, reads cluster.json, asks the leader, signals and stops the daemons. */
  private readonly driver: ClusterDriver;
  private readonly procs = new Map<string, NetnsProcess>();
  private readonly hostsById = new Map<string, Host>();
  private readonly storageCut = new Set<string>();
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
    this.driver = new ClusterDriver(workdir);
    this.haDir = this.driver.haDir;
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
      const sws = Array.from({ length: opts.shuffleWorkers ?? 0 }, (_, i) => `sw-${i + 1}`);
      await Promise.all(sws.map((id) => cluster.startDaemon('shuffle-worker', id, deadline)));
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
  async startDaemon(
    role: ProcessRole,
    id: string,
    deadline = Date.now() + 60_000,
    extra: Readonly<Record<string, string>> = {},
  ): Promise<NetnsProcess> {
    const host = this.hostsById.get(id) ?? this.net.addHost(id);
    this.hostsById.set(id, host);
    const wildcard = this.wildcardBind.has(id);
    const own: Record<string, string> =
      role === 'jobmaster'
        ? {
            'jobmaster.bind-host': wildcard ? '0.0.0.0' : host.ip,
            ...(wildcard ? { 'jobmaster.rpc.address': host.ip } : {}),
            'rest.bind-address': host.ip,
            'rest.port': '0',
          }
        : role === 'taskmanager'
          ? {
              'taskmanager.bind-host': wildcard ? '0.0.0.0' : host.ip,
              ...(wildcard ? { 'taskmanager.host': host.ip } : {}),
              'metrics.port': '0',
            }
          : {
              'shuffle-worker.bind-host': wildcard ? '0.0.0.0' : host.ip,
              ...(wildcard ? { 'shuffle-worker.host': host.ip } : {}),
              'shuffle-worker.metrics.port': '0',
            };
    // `ip netns exec` execs node in place: the child's pid is the daemon's, leading its own group.
    const started: ClusterProcess = await this.driver.startDaemon(
      {
        role,
        id,
        config: { ...this.config, ...own, ...extra },
        ...(role === 'taskmanager' ? { slots: this.slots } : {}),
        launcher: ['ip', 'netns', 'exec', host.netns],
        deadline: Math.max(Date.now() + 1_000, deadline),
      },
      { haDir: this.haDir, config: this.config, slots: this.slots },
    );
    const proc: NetnsProcess = { ...started, host };
    this.procs.set(id, proc);
    return proc;
  }

  waitFor<T>(
    predicate: () => T | Promise<T>,
    timeoutMs: number,
    what: string,
  ): Promise<Exclude<T, undefined | false | null>> {
    return this.driver.waitFor(predicate, timeoutMs, what);
  }

  waitForTaskManagers(ids: readonly string[], timeoutMs: number): Promise<ClusterOverview__Output> {
    return this.driver.waitForTaskManagers(ids, timeoutMs);
  }

  overview(): Promise<ClusterOverview__Output> {
    return this.driver.overview();
  }

  status(jobId: string): Promise<JobStatusJson> {
    return this.driver.status(jobId);
  }

  waitForJob(jobId: string, timeoutMs: number): Promise<JobStatusJson> {
    return this.driver.waitForJob(jobId, timeoutMs);
  }

  /** HA services of this cluster's backend, for the test itself (close them after use). */
  haServices(): HighAvailabilityServices {
    return createHaServices(Configuration.of({ ...this.config }), this.haDir);
  }

  /** The leader the HA backend records (leader.json, or etcd's leader key), as clients see it. */
  leader(): Promise<LeaderInfo | undefined> {
    return this.driver.leader();
  }

  /** Runs the CLI in the test's own namespace, against this cluster (`--cluster <workdir>`). */
  rebound(command: string, args: readonly string[], timeoutMs = 120_000): Promise<CliResult> {
    return this.driver.rebound([command, '--cluster', this.workdir, ...args], { timeoutMs });
  }

  /** Submits a job module detached; resolves with its id. */
  async submit(
    jobFile: string,
    jobArgs: readonly string[],
    config: Readonly<Record<string, string>> = {},
  ): Promise<string> {
    return (await this.driver.submit(jobFile, jobArgs, { config })).jobId;
  }

  /** Task lifecycle events from the TaskManager logs. */
  taskEvents(): Promise<TaskEvent[]> {
    return this.driver.taskEvents();
  }

  log(id: string): Promise<string> {
    return this.driver.log(id);
  }

  isAlive(id: string): boolean {
    const p = this.procs.get(id);
    return p !== undefined && isProcessAlive(p.pid, p.id);
  }

  /** Sends `signal` to daemon `id`; for SIGKILL/SIGTERM waits until it is gone. */
  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.driver.kill(id, signal);
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
      mountInProcess(this.process(id).pid, [
        'mount',
        '-t',
        'tmpfs',
        '-o',
        'ro,size=64k',
        'rebound-partitioned',
        this.haDir,
      ]);
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
    for (const id of [...this.storageCut]) {
      try {
        this.heal(id);
      } catch {
        // Its process is gone; the mount went with its namespace.
      }
    }
    await this.driver.stop();
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
