/**
 * Hosts that are apart, on one machine: each "host" is a Linux network namespace with one veth
 * interface on a private /24, all plugged into a bridge that lives in a namespace of its own (so
 * the root namespace's firewall, e.g. Docker's FORWARD policy, never sees the bridged traffic).
 * The test process reaches the hosts through one more veth whose root-side end it creates; no
 * existing interface, route or address is touched. Requires root and iproute2 (nft for
 * partitions, nsenter/mount for storage cuts).
 *
 * Names are unique per run (`rb-<pid>-<n>` namespaces, `rb<pid>c` root link), so parallel runs
 * never collide, and a run that died without cleaning up is swept by the next one (its pid is gone).
 */
import { execFileSync, spawnSync } from 'node:child_process';

const NS_PREFIX = 'rb-';
/** Subnets are 10.213.<x>.0/24; x is picked per run among those not routed here yet. */
const SUBNET_BASE = '10.213';
const PARTITION_TABLE = 'rebound_partition';

export interface Host {
  /** Short name in test output (e.g. `jm-1`). */
  readonly name: string;
  /** Network namespace name (`ip netns exec <netns> ...`). */
  readonly netns: string;
  /** The host's only address (besides loopback). */
  readonly ip: string;
}

function run(cmd: string, args: readonly string[], input?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, timeout: 20_000 });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

function tryRun(cmd: string, args: readonly string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore', timeout: 20_000 }).status === 0;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why this machine cannot run the netns tests, or undefined if it can. */
export function netnsUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'not root (ip netns needs CAP_SYS_ADMIN and CAP_NET_ADMIN)';
  const probe = `${NS_PREFIX}${process.pid}-probe`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8', timeout: 20_000 });
  if (made.error) return `ip is not installed (${made.error.message})`;
  if (made.status !== 0) return `ip netns add fails: ${made.stderr.trim()}`;
  try {
    const nft = spawnSync('ip', ['netns', 'exec', probe, 'nft', 'list', 'tables'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (nft.status !== 0)
      return `nft does not work in a network namespace: ${(nft.stderr || String(nft.error)).trim()}`;
  } finally {
    tryRun('ip', ['netns', 'del', probe]);
  }
  return undefined;
}

/** Kills what runs in `netns` and deletes it (its veth ends, and their peers, go with it). */
function deleteNamespace(netns: string): void {
  const pids = spawnSync('ip', ['netns', 'pids', netns], { encoding: 'utf8', timeout: 20_000 }).stdout ?? '';
  for (const p of pids.split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(p), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  tryRun('ip', ['netns', 'del', netns]);
}

/**
 * Deletes namespaces and root links of earlier runs whose process is gone: a test run that was
 * SIGKILLed could not clean up after itself.
 */
export function sweepStale(): string[] {
  const swept: string[] = [];
  const list = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8', timeout: 20_000 }).stdout ?? '';
  for (const line of list.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = /^rb-(\d+)-/.exec(name);
    if (m && !pidAlive(Number(m[1]))) {
      deleteNamespace(name);
      swept.push(name);
    }
  }
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8', timeout: 20_000 }).stdout ?? '';
  for (const line of links.split('\n')) {
    const m = /^\d+:\s+(rb(\d+)c)[@:]/.exec(line);
    if (m && !pidAlive(Number(m[2]))) {
      tryRun('ip', ['link', 'del', m[1]!]);
      swept.push(m[1]!);
    }
  }
  return swept;
}

/** A third octet whose 10.213.x.0/24 no address or route of the root namespace uses yet. */
function pickSubnet(): string {
  const used = run('ip', ['-4', '-o', 'addr', 'show']) + run('ip', ['-4', 'route', 'show', 'table', 'all']);
  const start = process.pid % 250;
  for (let i = 0; i < 250; i++) {
    const x = ((start + i) % 250) + 1;
    const prefix = `${SUBNET_BASE}.${x}.`;
    if (!used.includes(prefix)) return `${SUBNET_BASE}.${x}`;
  }
  throw new Error(`no free ${SUBNET_BASE}.x.0/24 subnet on this machine`);
}

const liveNetworks = new Set<HostNetwork>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous: 'exit' handlers cannot wait. afterAll normally cleans up first.
  process.on('exit', () => {
    for (const n of liveNetworks) n.destroy();
  });
}

/** A bridge and the hosts plugged into it. */
export class HostNetwork {
  private readonly hosts: Host[] = [];
  private readonly partitioned = new Set<string>();
  private nextHost = 2;
  private destroyed = false;

  private constructor(
    /** `10.213.x` */
    readonly subnet: string,
    private readonly bridgeNs: string,
    private readonly clientLink: string,
    private readonly seq: { n: number },
  ) {}

  /** The address of the test process on the bridge (hosts reach it there). */
  get clientIp(): string {
    return `${this.subnet}.1`;
  }

  static create(): HostNetwork {
    sweepStale();
    installExitHook();
    const seq = { n: 0 };
    const bridgeNs = `${NS_PREFIX}${process.pid}-${seq.n++}-br`;
    const clientLink = `rb${process.pid}c`;
    const subnet = pickSubnet();
    const net = new HostNetwork(subnet, bridgeNs, clientLink, seq);
    liveNetworks.add(net);
    try {
      run('ip', ['netns', 'add', bridgeNs]);
      const inBr = (...args: string[]): string => run('ip', ['-n', bridgeNs, ...args]);
      inBr('link', 'set', 'lo', 'up');
      inBr('link', 'add', 'br0', 'type', 'bridge');
      inBr('link', 'set', 'br0', 'up');
      // The test process's own leg: its root-side end is the only thing created outside our namespaces.
      run('ip', ['link', 'add', clientLink, 'type', 'veth', 'peer', 'name', 'c0', 'netns', bridgeNs]);
      inBr('link', 'set', 'c0', 'master', 'br0');
      inBr('link', 'set', 'c0', 'up');
      run('ip', ['addr', 'add', `${net.clientIp}/24`, 'dev', clientLink]);
      run('ip', ['link', 'set', clientLink, 'up']);
    } catch (err) {
      net.destroy();
      throw err;
    }
    return net;
  }

  /** A new host: a namespace with loopback and `eth0` at the next free address of the subnet. */
  addHost(name: string): Host {
    if (this.nextHost > 254) throw new Error(`subnet ${this.subnet}.0/24 is full`);
    const n = this.seq.n++;
    const netns = `${NS_PREFIX}${process.pid}-${n}`;
    const ip = `${this.subnet}.${this.nextHost++}`;
    run('ip', ['netns', 'add', netns]);
    const host: Host = { name, netns, ip };
    this.hosts.push(host);
    run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', this.bridgeNs, 'link', 'add', `h${n}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    run('ip', ['-n', this.bridgeNs, 'link', 'set', `h${n}`, 'master', 'br0']);
    run('ip', ['-n', this.bridgeNs, 'link', 'set', `h${n}`, 'up']);
    run('ip', ['-n', netns, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
    return host;
  }

  /** `[cmd, ...args]` run inside `host`'s network namespace. */
  exec(host: Host, argv: readonly string[]): string[] {
    return ['ip', 'netns', 'exec', host.netns, ...argv];
  }

  /**
   * Cuts `host` off the network: every packet in or out of it, except on loopback, is dropped
   * silently (nft in its namespace), so peers see a silent host, as with a pulled cable, not a
   * refused connection. Connections stay open and resume on heal().
   */
  partition(host: Host): void {
    const rules = [
      `table inet ${PARTITION_TABLE} {`,
      '  chain input { type filter hook input priority -300; policy drop; iifname "lo" accept; }',
      '  chain output { type filter hook output priority -300; policy drop; oifname "lo" accept; }',
      '}',
    ].join('\n');
    run('ip', ['netns', 'exec', host.netns, 'nft', '-f', '-'], rules);
    this.partitioned.add(host.netns);
  }

  heal(host: Host): void {
    if (!this.partitioned.has(host.netns)) return;
    run('ip', ['netns', 'exec', host.netns, 'nft', 'delete', 'table', 'inet', PARTITION_TABLE]);
    this.partitioned.delete(host.netns);
  }

  isPartitioned(host: Host): boolean {
    return this.partitioned.has(host.netns);
  }

  /** Whether `from` can open a TCP connection to `to:port` right now (a probe through the veths). */
  canConnect(from: Host, to: string, port: number, timeoutMs = 1_000): boolean {
    const script = `const s=require('net').connect(${port},'${to}');s.setTimeout(${timeoutMs},()=>process.exit(2));s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));`;
    return (
      spawnSync('ip', ['netns', 'exec', from.netns, process.execPath, '-e', script], {
        stdio: 'ignore',
        timeout: timeoutMs + 10_000,
      }).status === 0
    );
  }

  /** Deletes every namespace and link of this network, killing what still runs there. Idempotent. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const h of this.hosts) deleteNamespace(h.netns);
    deleteNamespace(this.bridgeNs);
    // Normally gone with its peer in the bridge namespace; a failed create may have left it.
    if (spawnSync('ip', ['link', 'show', this.clientLink], { stdio: 'ignore' }).status === 0)
      tryRun('ip', ['link', 'del', this.clientLink]);
    liveNetworks.delete(this);
  }
}

/** `ip netns exec` gives each process a private mount namespace: mounts made there stay there. */
export function mountInProcess(pid: number, argv: readonly string[]): void {
  execFileSync('nsenter', ['-t', String(pid), '-m', '--', ...argv], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 20_000,
  });
}
