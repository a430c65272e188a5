import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defaultHandlers } from '../handlers.js';
import type { CliIo } from '../io.js';
import { REBOUND_BIN } from '../local-spawn.js';
import { runCli } from '../program.js';

export { REBOUND_BIN };

/** The repository: job modules and fixtures are named relative to it. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** The command is SIGKILLed after this long (default 120 s; child processes only). */
  readonly timeoutMs?: number;
  /** Called with each chunk of stdout as it arrives (a test can wait on what a long command printed so far). */
  readonly onStdout?: (chunk: string) => void;
}

/** How a driver runs `rebound ARGS`. */
export type CliRunner = (args: readonly string[], opts?: RunOptions) => Promise<CliResult>;

/** Runs `node bin/rebound.js ARGS` as a child process and captures its output and exit code. */
export const runRebound: CliRunner = (args, opts = {}) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [REBOUND_BIN, ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      opts.onStdout?.(d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });

/**
 * Runs a `rebound` command inside this process (the daemons it starts are real, detached
 * processes): no CLI start-up per command, which matters when a run restarts processes often.
 */
export const runReboundInProcess: CliRunner = async (args, opts = {}) => {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (s: string) => ((stdout += s), opts.onStdout?.(s), true) } as CliIo['stdout'],
    stderr: { write: (s: string) => ((stderr += s), true) } as CliIo['stderr'],
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    cwd: opts.cwd ?? REPO_ROOT,
  };
  const code = await runCli(args, io, defaultHandlers(io));
  return { code, signal: null, stdout, stderr };
};

/** `-D key=value` for each entry. */
export function defines(config: Readonly<Record<string, string>>): string[] {
  return Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
}

export function describeResult(args: readonly string[], r: CliResult): string {
  return `rebound ${args.join(' ')} exited ${r.code ?? r.signal}: ${r.stderr.trim() || r.stdout.trim()}`;
}
