import { createServer, type Server } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '@rebound/core';
import { buildConfiguration } from './args.js';
import { clientConfiguration, resolveClusterTarget } from './cluster-target.js';
import { HA_DIR_ENV } from './names.js';
import { PROPERTIES_ENV, propertiesFromEnv } from './env-properties.js';

describe('REBOUND_PROPERTIES', () => {
  afterEach(() => vi.unstubAllEnvs());

  it("reads 'key: value' lines, values with colons, quotes, blank lines and comments", () => {
    const text =
      '\n# HA on etcd\nhigh-availability.type: etcd\n  high-availability.etcd.endpoints: http://etcd:2379  \nhigh-availability.cluster-id: "compose"\n';
    expect(propertiesFromEnv({ [PROPERTIES_ENV]: text })).toEqual({
      'high-availability.type': 'etcd',
      'high-availability.etcd.endpoints': 'http://etcd:2379',
      'high-availability.cluster-id': 'compose',
    });
    expect(propertiesFromEnv({})).toEqual({});
  });

  it('fails in one line naming the variable on a malformed line or a bad key', () => {
    expect(() => propertiesFromEnv({ [PROPERTIES_ENV]: 'rpc.timeout: 1 s\nhigh-availability.type=etcd' })).toThrow(
      new ConfigError(`${PROPERTIES_ENV} line 2 'high-availability.type=etcd': expected 'key: value'`),
    );
    expect(() => propertiesFromEnv({ [PROPERTIES_ENV]: 'high-availability.type: zookeeper' })).toThrow(
      /^REBOUND_PROPERTIES line 1 'high-availability.type: zookeeper': .*high-availability.type/,
    );
    expect(() => propertiesFromEnv({ [PROPERTIES_ENV]: 'no.such.key: 1' })).toThrow(
      /^REBOUND_PROPERTIES line 1 'no.such.key: 1': unknown configuration key 'no.such.key'/,
    );
  });

  it('applies after the config file and before -D for daemons, and to client commands', () => {
    const env = { [PROPERTIES_ENV]: 'rpc.timeout: 7 s\nhigh-availability.type: etcd' };
    const daemon = buildConfiguration({ dynamic: ['rpc.timeout=9 s'] }, env);
    expect(daemon.getString('high-availability.type')).toBe('etcd');
    expect(daemon.getDurationMs('rpc.timeout')).toBe(9_000);
    vi.stubEnv(PROPERTIES_ENV, env[PROPERTIES_ENV]);
    const client = clientConfiguration({ kind: 'ha', haDir: '/ha' });
    expect(client.getString('high-availability.type')).toBe('etcd');
    expect(client.getDurationMs('rpc.timeout')).toBe(7_000);
  });

  it('points REBOUND_HA_DIR at etcd: an unreachable etcd is one line naming the endpoints, within the request timeout', async () => {
    // A port that accepts nothing: listen, then close it.
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    const endpoint = `http://127.0.0.1:${port}`;
    vi.stubEnv(
      PROPERTIES_ENV,
      `high-availability.type: etcd\nhigh-availability.etcd.endpoints: ${endpoint}\nhigh-availability.etcd.request-timeout: 1 s`,
    );
    const dir = mkdtempSync(join(tmpdir(), 'rebound-props-'));
    const t0 = Date.now();
    const err = await resolveClusterTarget({}, '/', { [HA_DIR_ENV]: dir }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(
      new RegExp(
        `^reading /default/leader at etcd ${endpoint} failed \\(.*\\); check that etcd runs there or fix high-availability.etcd.endpoints$`,
      ),
    );
    expect(err?.message).not.toContain('\n');
    expect(Date.now() - t0).toBeLessThan(10_000);
    // The HA directory itself need not hold anything under etcd: --ha-dir gives the same answer.
    await expect(resolveClusterTarget({ haDir: dir }, '/')).rejects.toThrow(/^reading \/default\/leader at etcd/);
  });
});
