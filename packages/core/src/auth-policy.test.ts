import { describe, expect, it } from 'vitest';
import { checkAuthenticationPolicy, isLoopbackHost } from './auth-policy.js';
import { Configuration } from './config.js';

describe('checkAuthenticationPolicy: closed unless you say otherwise', () => {
  it('refuses a daemon without a secret, naming the fix', () => {
    for (const role of ['jobmaster', 'taskmanager'] as const) {
      expect(() => checkAuthenticationPolicy(role, Configuration.of({}))).toThrow(
        new RegExp(
          `^${role} refuses to start without a cluster secret: set security\\.auth\\.token-file .*security\\.auth\\.allow-unauthenticated=true`,
        ),
      );
    }
  });

  it('with allow-unauthenticated: loopback is allowed with a warning, any other bind address is refused', () => {
    const open = { 'security.auth.allow-unauthenticated': 'true' };
    expect(checkAuthenticationPolicy('jobmaster', Configuration.of(open))).toMatch(/WITHOUT authentication/);
    expect(checkAuthenticationPolicy('taskmanager', Configuration.of(open))).toMatch(/WITHOUT authentication/);
    const cases: [role: 'jobmaster' | 'taskmanager', key: string][] = [
      ['jobmaster', 'jobmaster.bind-host'],
      ['jobmaster', 'rest.bind-address'],
      ['taskmanager', 'taskmanager.bind-host'],
    ];
    for (const [role, key] of cases) {
      expect(() => checkAuthenticationPolicy(role, Configuration.of({ ...open, [key]: '0.0.0.0' }))).toThrow(
        `${role} refuses to bind ${key}=0.0.0.0 without a cluster secret: security.auth.allow-unauthenticated allows loopback addresses only; set security.auth.token-file`,
      );
    }
  });

  it('a secret is all it takes, on any address', () => {
    const config = Configuration.of({ 'security.auth.token-file': '/some/secret', 'jobmaster.bind-host': '0.0.0.0' });
    expect(checkAuthenticationPolicy('jobmaster', config)).toBeUndefined();
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.3.4.5', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '', '10.0.0.1', '128.0.0.1', 'example.org', '[::]'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});
