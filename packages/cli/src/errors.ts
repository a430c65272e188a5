import { CommanderError } from 'commander';
import { ErrorCode, ReboundError, errorMessage } from '@rebound/core';

/** Bad command-line usage (a malformed option value, a missing argument): exit code 2. */
export class UsageError extends ReboundError {
  /** `seeHelp`: end the line with "(see --help)"; off when the message names its own fix. */
  constructor(
    message: string,
    readonly seeHelp = true,
  ) {
    super(ErrorCode.CONFIG_INVALID, message);
  }
}

/** No local cluster where the user pointed, or none of its processes runs. */
export class ClusterNotFoundError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.LEADER_NOT_FOUND, message);
  }
}

/** What the top-level handler prints and how the process exits. */
export interface ErrorReport {
  /** The single line for stderr, already prefixed with `rebound: `. */
  readonly line: string;
  readonly exitCode: number;
  /** Only when REBOUND_DEBUG=1 and the error was not an expected ReboundError. */
  readonly stack?: string;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

const FS_FIXES: Readonly<Record<string, (path: string) => string>> = {
  EACCES: (p) => `permission denied; make ${p} writable by this user${uid()} or choose another path`,
  EPERM: (p) => `operation not permitted; make ${p} writable by this user${uid()} or choose another path`,
  EROFS: (p) => `${p} is on a read-only file system; choose a writable path`,
  ENOSPC: (p) => `no space left on the device of ${p}; free some or choose another path`,
  ENOTDIR: (p) => `a part of ${p} is a file, not a directory; choose another path`,
};

const uid = (): string => (typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '');

/**
 * A file system error with a path (a data or work directory that cannot be created or written): the
 * path and the fix, in place of "unexpected error".
 */
function fileSystemLine(err: unknown): string | undefined {
  const e = err as { code?: unknown; path?: unknown; syscall?: unknown } | null;
  if (!e || typeof e.code !== 'string' || typeof e.path !== 'string') return undefined;
  const fix = FS_FIXES[e.code];
  if (!fix) return undefined;
  const op = typeof e.syscall === 'string' ? `${e.syscall} ` : '';
  return `rebound: cannot ${op}${e.path}: ${fix(e.path)}`;
}

/**
 * Turns anything thrown by a command into one line on stderr. Users never see a stack trace for
 * an expected failure; REBOUND_DEBUG=1 adds the stack of unexpected ones.
 */
export function describeError(err: unknown, debug: boolean): ErrorReport {
  if (err instanceof CommanderError) {
    const message = oneLine(err.message.replace(/^error:\s*/i, ''));
    return { line: `rebound: ${message} (see --help)`, exitCode: EXIT_USAGE };
  }
  if (err instanceof UsageError) {
    return { line: `rebound: ${oneLine(err.message)}${err.seeHelp ? ' (see --help)' : ''}`, exitCode: EXIT_USAGE };
  }
  if (err instanceof ReboundError) {
    const report: ErrorReport = { line: `rebound: ${oneLine(err.message)}`, exitCode: EXIT_FAILURE };
    return debug && err.code === ErrorCode.INTERNAL ? { ...report, stack: err.stack } : report;
  }
  const fsLine = fileSystemLine(err);
  if (fsLine) return { line: fsLine, exitCode: EXIT_FAILURE };
  const stack = err instanceof Error ? err.stack : undefined;
  return {
    line: `rebound: unexpected error: ${oneLine(errorMessage(err))}${debug ? '' : ' (set REBOUND_DEBUG=1 for the stack trace)'}`,
    exitCode: EXIT_FAILURE,
    ...(debug && stack ? { stack } : {}),
  };
}

/** The `--json` form of an error on stderr: `{"error":{"code","message","exitCode"}}`. */
export function errorJson(
  err: unknown,
  report: ErrorReport,
): { error: { code: string; message: string; exitCode: number } } {
  const code =
    err instanceof CommanderError || err instanceof UsageError
      ? 'USAGE'
      : err instanceof ReboundError
        ? err.code
        : ErrorCode.INTERNAL;
  return { error: { code, message: report.line.replace(/^rebound: /, ''), exitCode: report.exitCode } };
}
