import { CommanderError } from 'commander';
import { ConfigError, InternalError, JobNotFoundError } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { describeError, UsageError } from './errors.js';

describe('describeError', () => {
  it('prints a ReboundError as one line, exit 1, no stack', () => {
    const r = describeError(new JobNotFoundError('abc'), true);
    expect(r).toEqual({ line: "rebound: no job with id abc; run 'rebound list' to see the jobs", exitCode: 1 });
    expect(describeError(new ConfigError('bad\nvalue'), false).line).toBe('rebound: bad value');
  });

  it('treats commander and usage errors as exit 2', () => {
    const r = describeError(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--nope'"), false);
    expect(r).toEqual({ line: "rebound: unknown option '--nope' (see --help)", exitCode: 2 });
    expect(describeError(new UsageError('bad'), false).exitCode).toBe(2);
  });

  it('names the path and the fix of a file system error instead of an unexpected one', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/shuffle/data'"), {
      code: 'EACCES',
      syscall: 'mkdir',
      path: '/shuffle/data',
    });
    const r = describeError(denied, false);
    expect(r.exitCode).toBe(1);
    expect(r.line).toMatch(
      /^rebound: cannot mkdir \/shuffle\/data: permission denied; make \/shuffle\/data writable by this user( \(uid \d+\))? or choose another path$/,
    );
    const full = Object.assign(new Error('ENOSPC'), { code: 'ENOSPC', syscall: 'write', path: '/d/x' });
    expect(describeError(full, false).line).toBe(
      'rebound: cannot write /d/x: no space left on the device of /d/x; free some or choose another path',
    );
    // Without a path there is nothing to name: still the unexpected-error line.
    expect(describeError(Object.assign(new Error('EACCES'), { code: 'EACCES' }), false).line).toMatch(
      /unexpected error/,
    );
  });

  it('prints unexpected errors in one line, with the stack only in debug mode', () => {
    const plain = describeError(new TypeError('x is undefined'), false);
    expect(plain.line).toBe('rebound: unexpected error: x is undefined (set REBOUND_DEBUG=1 for the stack trace)');
    expect(plain.stack).toBeUndefined();
    const debug = describeError(new TypeError('x is undefined'), true);
    expect(debug.stack).toContain('TypeError');
    expect(describeError(new InternalError('boom'), true).stack).toBeDefined();
  });
});
