import { describe, expect, it } from 'vitest';
import { Configuration, ConfigError, checkAuthenticationPolicy } from '@rebound/core';
import { applyShuffleDefault, shuffleLine } from './local.js';

describe('local up with shuffle workers', () => {
  it('turns remote shuffle on with any worker, unless the configuration chose a shuffle', () => {
    const none: Record<string, string> = {};
    applyShuffleDefault(none, 0);
    expect(none).toEqual({});
    const some: Record<string, string> = { 'rpc.timeout': '1 s' };
    applyShuffleDefault(some, 2);
    expect(some).toEqual({ 'rpc.timeout': '1 s', 'shuffle.type': 'remote' });
    const chosen: Record<string, string> = { 'shuffle.type': 'taskmanager' };
    applyShuffleDefault(chosen, 2);
    expect(chosen).toEqual({ 'shuffle.type': 'taskmanager' });
  });

  it('says in one line where partitions are kept', () => {
    expect(shuffleLine('remote', 2)).toMatch(/^remote: partitions are written to the 2 shuffle worker/);
    expect(shuffleLine('taskmanager', 1)).toMatch(/the 1 shuffle worker\(s\) are not used$/);
    expect(shuffleLine('remote', 0)).toMatch(/start-shuffle-worker/);
  });

  it('a shuffle worker, like every daemon, refuses to run open on a non-loopback address', () => {
    const open = Configuration.of({
      'security.auth.allow-unauthenticated': 'true',
      'shuffle-worker.bind-host': '0.0.0.0',
    });
    expect(() => checkAuthenticationPolicy('shuffle-worker', open)).toThrow(ConfigError);
    expect(() => checkAuthenticationPolicy('shuffle-worker', Configuration.empty())).toThrow(/shuffle-worker refuses/);
    expect(
      checkAuthenticationPolicy('shuffle-worker', Configuration.of({ 'security.auth.allow-unauthenticated': 'true' })),
    ).toMatch(/WITHOUT authentication/);
  });
});
