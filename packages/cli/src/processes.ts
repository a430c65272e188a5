import { readFileSync } from 'node:fs';
import { sleep } from '@rebound/core';

function procStat(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}

function procCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a running (not zombie) process. With `id`, on systems with /proc, it must also
 * be the daemon started with `--id <id>`: a recycled pid must not make a dead cluster look alive.
 */
export function isProcessAlive(pid: number, id?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: it exists but belongs to another user, so it is not our daemon.
    return false;
  }
  const stat = procStat(pid);
  if (stat !== undefined) {
    // Field 3 follows the parenthesized command name, which may itself contain spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  }
  if (id !== undefined) {
    const argv = procCmdline(pid);
    if (argv !== undefined) {
      const i = argv.indexOf('--id');
      if (i < 0 || argv[i + 1] !== id) return false;
    }
  }
  return true;
}

/**
 * Sends a signal to a daemon. SIGKILL goes to its whole process group (`local` starts daemons
 * detached, so each leads a group), taking any helper child down with it, as a machine crash would.
 */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  if (signal === 'SIGKILL') {
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      // Not a group leader (started by other means): fall through to the process itself.
    }
  }
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface Tracked {
  readonly pid: number;
  readonly id?: string;
}

/** Waits until none of `procs` is alive; returns those still alive at the deadline. */
export async function waitForExit<T extends Tracked>(
  procs: readonly T[],
  timeoutMs: number,
  pollMs = 50,
): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = procs.filter((p) => isProcessAlive(p.pid, p.id));
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(pollMs);
    alive = alive.filter((p) => isProcessAlive(p.pid, p.id));
  }
  return alive;
}
