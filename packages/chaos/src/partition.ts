/**
 * Network partitions on the loopback cluster of a chaos run: every packet in or out of one
 * process (a TaskManager, a JobMaster, an etcd member) is dropped silently, then the cut is healed.
 *
 * All daemons share 127.0.0.1, and a process's outgoing connections use ephemeral ports, so rules
 * on its listening ports alone would cut only half its traffic. Instead each daemon runs in a
 * cgroup (v2) of its own, joined before it opens a socket (cgroup-preload.mjs for the Node
 * daemons, a wrapper script for etcd), and a cut is an nft table with
 * `socket cgroupv2 level L "<cgroup>" drop` on the input and output hooks: it matches every socket
 * the process owns, listening, accepted or dialled, whatever its port. Needs root, nft and a
 * cgroup v2 hierarchy; each cut is a table of its own (`rbchaos_<pid>_<target>`), deleted on heal,
 * at the end of the run, on exit and Ctrl-C (cleanupPartitionsSync), and swept by the next
 * harness if this one was SIGKILLed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChaosError } from './errors.js';

const TABLE_PREFIX = 'rbchaos_';
const CGROUP_PREFIX = 'rebound-chaos-';
/** nft resolves `socket cgroupv2` paths relative to this directory. */
const NFT_CGROUP_BASE = '/sys/fs/cgroup';
const PRELOAD = fileURLToPath(new URL('./cgroup-preload.mjs', import.meta.url));

function run(cmd: string, args: readonly string[], input?: string): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, timeout: 20_000 });
  return { ok: !r.error && r.status === 0, out: r.error ? r.error.message : `${r.stdout}${r.stderr}`.trim() };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The cgroup v2 mount point (pure v2 at /sys/fs/cgroup, or hybrid at /sys/fs/cgroup/unified). */
export function cgroup2Mount(): string | undefined {
  const mounts = (() => {
    try {
      return readFileSync('/proc/self/mounts', 'utf8');
    } catch {
      return '';
    }
  })();
  const points = mounts
    .split('\n')
    .map((l) => l.split(' '))
    .filter(
      (f) =>
        f[2] === 'cgroup2' &&
        f[1] !== undefined &&
        (f[1] === NFT_CGROUP_BASE || f[1].startsWith(`${NFT_CGROUP_BASE}/`)),
    )
    .map((f) => f[1]!);
  return points.sort((a, b) => a.length - b.length)[0];
}

/** Why this machine cannot cut the network of a chaos run, or undefined if it can. */
export function partitionsUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'not root (nft and cgroups need CAP_NET_ADMIN and CAP_SYS_ADMIN)';
  const nft = run('nft', ['list', 'tables']);
  if (!nft.ok) return `nft does not work here: ${nft.out.split('\n')[0]}`;
  const mount = cgroup2Mount();
  if (!mount) return `no cgroup v2 hierarchy under ${NFT_CGROUP_BASE} (nft matches sockets by cgroup v2)`;
  const probe = join(mount, `${CGROUP_PREFIX}${process.pid}-probe`);
  try {
    mkdirSync(probe, { recursive: true });
    rmdirSync(probe);
  } catch (err) {
    return `cannot create cgroups in ${mount}: ${(err as Error).message}`;
  }
  return undefined;
}

/** Deletes tables and cgroups of earlier harnesses whose process is gone. */
export function sweepStalePartitions(): string[] {
  const swept: string[] = [];
  for (const line of run('nft', ['list', 'tables']).out.split('\n')) {
    const m = /^table inet (rbchaos_(\d+)_\w+)$/.exec(line.trim());
    if (m && !pidAlive(Number(m[2]))) {
      run('nft', ['delete', 'table', 'inet', m[1]!]);
      swept.push(m[1]!);
    }
  }
  const mount = cgroup2Mount();
  if (mount) {
    for (const name of safeReaddir(mount)) {
      const m = new RegExp(`^${CGROUP_PREFIX}(\\d+)-`).exec(name);
      if (m && !pidAlive(Number(m[1]))) {
        removeCgroupTree(join(mount, name));
        swept.push(name);
      }
    }
  }
  return swept;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

function removeCgroupTree(dir: string): boolean {
  let ok = true;
  for (const child of safeReaddir(dir)) ok = removeCgroupTree(join(dir, child)) && ok;
  try {
    rmdirSync(dir);
  } catch {
    ok = false;
  }
  return ok;
}

/** Tables of cuts not healed yet, by every NetworkCutter of this process (for the exit hook). */
const liveTables = new Set<string>();

/** Heals every cut of this process, synchronously (exit hooks, Ctrl-C). */
export function cleanupPartitionsSync(): void {
  for (const t of liveTables) run('nft', ['delete', 'table', 'inet', t]);
  liveTables.clear();
}

/** The cgroups and cuts of one run. */
export class NetworkCutter {
  private readonly cuts = new Map<string, string>();
  private savedEnv: { nodeOptions: string | undefined; cgroup: string | undefined } | undefined;

  private constructor(
    /** The run's cgroup directory; each daemon in `<root>/<id>`. */
    readonly root: string,
    private readonly mount: string,
    private readonly tag: string,
  ) {}

  /** A run's cutter: its cgroup directory under the cgroup v2 mount, named after this process and `tag`. */
  static create(tag: string): NetworkCutter {
    const why = partitionsUnavailableReason();
    if (why) throw new ChaosError(`network partitions are not possible here: ${why}`);
    const mount = cgroup2Mount()!;
    const safe = tag.replace(/[^\w]/g, '_');
    const root = join(mount, `${CGROUP_PREFIX}${process.pid}-${safe}`);
    mkdirSync(root, { recursive: true });
    return new NetworkCutter(root, mount, safe);
  }

  /**
   * From now on, daemons this process spawns join `<root>/<id>` before they open a socket. The
   * CLI spawns daemons with this process's environment, so the hook goes there; end() restores it.
   */
  begin(): void {
    if (this.savedEnv) return;
    this.savedEnv = { nodeOptions: process.env.NODE_OPTIONS, cgroup: process.env.REBOUND_CHAOS_CGROUP };
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim();
    process.env.REBOUND_CHAOS_CGROUP = this.root;
  }

  /** An etcd binary that joins `<root>/etcd-<member name>` and then runs `binary`. */
  etcdWrapper(dir: string, binary = process.env.REBOUND_ETCD_BIN ?? '/usr/bin/etcd'): string {
    const path = join(dir, 'etcd-in-cgroup.sh');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path,
      [
        '#!/bin/sh',
        '# Written by the chaos harness: an etcd member in a cgroup of its own (packages/chaos/src/partition.ts).',
        'name=""; prev=""',
        'for a in "$@"; do [ "$prev" = "--name" ] && name="$a"; prev="$a"; done',
        `if [ -n "$name" ]; then mkdir -p '${this.root}/etcd-'"$name" && echo $$ > '${this.root}/etcd-'"$name"/cgroup.procs || exit 1; fi`,
        `exec '${binary}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(path, 0o755);
    return path;
  }

  /** Whether process `pid` runs in the cgroup of `target` (a daemon id, or `etcd-m0`). */
  isInCgroup(pid: number, target: string): boolean {
    try {
      const text = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
      const want = `/${relative(this.mount, join(this.root, target))}`;
      return text.split('\n').some((l) => l.startsWith('0::') && l.slice(3) === want);
    } catch {
      return false;
    }
  }

  /** Drops every packet in or out of `target`'s sockets until heal(target). */
  cut(target: string): void {
    if (this.cuts.has(target)) return;
    const cgroup = join(this.root, target);
    mkdirSync(cgroup, { recursive: true });
    const level = relative(this.mount, cgroup).split('/').length;
    const path = relative(NFT_CGROUP_BASE, cgroup);
    const table = `${TABLE_PREFIX}${process.pid}_${this.tag}_${target.replace(/[^\w]/g, '_')}`.slice(0, 250);
    const rule = `socket cgroupv2 level ${level} "${path}" drop`;
    const rules = [
      `table inet ${table} {`,
      `  chain input { type filter hook input priority -300; policy accept; ${rule}; }`,
      `  chain output { type filter hook output priority -300; policy accept; ${rule}; }`,
      '}',
    ].join('\n');
    const r = run('nft', ['-f', '-'], rules);
    if (!r.ok) throw new ChaosError(`nft: cutting ${target} off failed: ${r.out.split('\n')[0]}`);
    this.cuts.set(target, table);
    liveTables.add(table);
  }

  heal(target: string): void {
    const table = this.cuts.get(target);
    if (!table) return;
    const r = run('nft', ['delete', 'table', 'inet', table]);
    this.cuts.delete(target);
    liveTables.delete(table);
    if (!r.ok) throw new ChaosError(`nft: healing ${target} failed: ${r.out.split('\n')[0]}`);
  }

  isCut(target: string): boolean {
    return this.cuts.has(target);
  }

  /** Heals every cut and stops putting new daemons into cgroups. */
  end(): void {
    for (const t of [...this.cuts.keys()]) {
      try {
        this.heal(t);
      } catch {
        // Reported by the run's own heal; the exit hook tries again.
      }
    }
    if (this.savedEnv) {
      restoreEnv('NODE_OPTIONS', this.savedEnv.nodeOptions);
      restoreEnv('REBOUND_CHAOS_CGROUP', this.savedEnv.cgroup);
      this.savedEnv = undefined;
    }
  }

  /**
   * Removes the run's cgroups once their processes are gone (a SIGKILLed daemon leaves its cgroup
   * a moment after `local down` returns); false if some are still in use after `timeoutMs`.
   */
  async removeCgroups(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!removeCgroupTree(this.root)) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
    return true;
  }
}

function restoreEnv(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}
