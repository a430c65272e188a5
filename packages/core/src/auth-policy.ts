import { isIP } from 'node:net';
import type { Configuration } from './config.js';
import { ConfigError } from './errors.js';

/** The daemons that serve the cluster's RPCs, and the addresses each of them binds. */
const BIND_KEYS = {
  jobmaster: ['jobmaster.bind-host', 'rest.bind-address'],
  taskmanager: ['taskmanager.bind-host'],
  'shuffle-worker': ['shuffle-worker.bind-host'],
} as const;

export type DaemonRole = keyof typeof BIND_KEYS;

/** Whether `host` is reachable from this host only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * Closed unless you say otherwise (issue 25): a daemon without `security.auth.token-file` would
 * accept every RPC, and SubmitJob runs code. So it refuses to start, in one line naming the fix,
 * unless `security.auth.allow-unauthenticated` is set; even then it binds loopback only, so that
 * an open daemon is never reachable from another host. Returns the warning the daemon logs at
 * every start when it runs open, or undefined.
 */
export function checkAuthenticationPolicy(role: DaemonRole, config: Configuration): string | undefined {
  if (config.getString('security.auth.token-file') !== '') return undefined;
  if (!config.getBoolean('security.auth.allow-unauthenticated')) {
    throw new ConfigError(
      `${role} refuses to start without a cluster secret: set security.auth.token-file to a file of at least 16 random characters, mode 0600 (openssl rand -hex 32 > secret && chmod 600 secret), or -D security.auth.allow-unauthenticated=true for a loopback-only test`,
    );
  }
  for (const key of BIND_KEYS[role]) {
    const host = config.getString(key);
    if (!isLoopbackHost(host)) {
      throw new ConfigError(
        `${role} refuses to bind ${key}=${host || "''"} without a cluster secret: security.auth.allow-unauthenticated allows loopback addresses only; set security.auth.token-file`,
      );
    }
  }
  return `${role} runs WITHOUT authentication (security.auth.allow-unauthenticated=true): every local process can submit jobs, which run code; set security.auth.token-file`;
}
