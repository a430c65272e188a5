import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration } from '@rebound/core';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '../testing/etcd-cluster.js';
import { makeEtcdTlsFiles } from '../testing/etcd-security.js';
import { EtcdConnection } from './etcd-connection.js';

const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

/** The one-line error of the first call `config` makes, or 'ok'. */
async function firstCall(config: Record<string, string>): Promise<string> {
  let conn: EtcdConnection | undefined;
  try {
    conn = new EtcdConnection(Configuration.of({ 'high-availability.etcd.request-timeout': '5 s', ...config }));
    await conn.get(conn.keys.leader);
    return 'ok';
  } catch (err) {
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  } finally {
    conn?.close();
  }
}

/**
 * high-availability.etcd.username / password-file / tls.* against an etcd with client TLS,
 * client certificates required and auth enabled: the right credentials work, and every wrong one
 * is refused in one line naming the key to fix.
 */
describe.skipIf(!available)('etcd credentials and TLS', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let good: Record<string, string>;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1, tls: true, clientCertAuth: true, auth: true });
    good = etcd.clientConfig();
    dir = await mkdtemp(join(tmpdir(), 'rebound-etcd-creds-'));
  });

  afterAll(async () => {
    await etcd?.stopAll();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('connects with the user, its password and the CA and client certificate', async () => {
    expect(good['high-availability.etcd.endpoints']).toMatch(/^https:\/\/localhost:\d+$/);
    expect(await firstCall(good)).toBe('ok');
  });

  it('a wrong password is refused, naming password-file', async () => {
    const wrong = join(dir, 'wrong-password');
    await writeFile(wrong, 'not-the-password\n', { mode: 0o600 });
    expect(await firstCall({ ...good, 'high-availability.etcd.password-file': wrong })).toBe(
      `etcd ${etcd.endpointList} refused user 'rebound': wrong password or unknown user; fix high-availability.etcd.password-file or high-availability.etcd.username`,
    );
  });

  it('no user at an etcd with auth is refused, naming username and password-file', async () => {
    // A second etcd without --client-cert-auth: there a client certificate's CN would be an
    // identity of its own; here the call carries none.
    const noCertEtcd = await startEtcdCluster({ members: 1, tls: true, auth: true });
    try {
      const config = noCertEtcd.clientConfig();
      delete config['high-availability.etcd.username'];
      delete config['high-availability.etcd.password-file'];
      expect(await firstCall(config)).toMatch(
        new RegExp(
          `^etcd ${noCertEtcd.endpointList} requires authentication \\(.*user name is empty\\); set high-availability\\.etcd\\.username and high-availability\\.etcd\\.password-file$`,
        ),
      );
    } finally {
      await noCertEtcd.stopAll();
    }
  });

  it('without the CA the TLS handshake fails, and the line names tls.ca-file', async () => {
    const { ['high-availability.etcd.tls.ca-file']: _ca, ...noCa } = good;
    expect(await firstCall(noCa)).toMatch(
      /^reading \/default\/leader at etcd https:\/\/localhost:\d+ failed \(.*\); check that etcd runs there or fix high-availability\.etcd\.endpoints, and set high-availability\.etcd\.tls\.ca-file if etcd has a certificate of a private CA$/,
    );
  });

  it("with a CA that did not sign etcd's certificate, the line names tls.ca-file", async () => {
    const other = await makeEtcdTlsFiles(join(dir, 'other-ca'), 'localhost');
    expect(await firstCall({ ...good, 'high-availability.etcd.tls.ca-file': other.caFile })).toMatch(
      /^reading \/default\/leader at etcd https:\/\/localhost:\d+ failed \(.*\); check that etcd runs there or fix high-availability\.etcd\.endpoints, or high-availability\.etcd\.tls\.ca-file if it is not the CA that signed etcd's certificate$/,
    );
  });

  it('bad files and half-set keys are one line naming the key, before any call', async () => {
    const open = join(dir, 'open-password');
    await writeFile(open, 'pw\n');
    await chmod(open, 0o644);
    const cases: [Record<string, string>, RegExp][] = [
      [
        { 'high-availability.etcd.password-file': join(dir, 'missing') },
        /^high-availability\.etcd\.password-file: cannot read .*missing \(ENOENT\)/,
      ],
      [
        { 'high-availability.etcd.password-file': open },
        /^high-availability\.etcd\.password-file: .* is readable by other users; chmod 600 it$/,
      ],
      [
        { 'high-availability.etcd.tls.ca-file': join(dir, 'no-ca.pem') },
        /^high-availability\.etcd\.tls\.ca-file: cannot read .*no-ca\.pem \(ENOENT\)/,
      ],
      [
        { 'high-availability.etcd.tls.key-file': '' },
        /^high-availability\.etcd\.tls\.cert-file is set but high-availability\.etcd\.tls\.key-file is not/,
      ],
      [
        { 'high-availability.etcd.username': '' },
        /^high-availability\.etcd\.password-file is set but high-availability\.etcd\.username is not/,
      ],
      [
        { 'high-availability.etcd.endpoints': good['high-availability.etcd.endpoints']!.replace('https', 'http') },
        /^high-availability\.etcd\.tls\.ca-file is set but the etcd endpoint http:\/\/localhost:\d+ is not https:\/\//,
      ],
    ];
    for (const [override, pattern] of cases) expect(await firstCall({ ...good, ...override })).toMatch(pattern);
  });
});
