/**
 * `npm run test:compose`, etcd: the same failover as compose.e2e.ts on the README's etcd variant
 * (`-f docker-compose.yml -f docker-compose.etcd.yml`: a one-member etcd running the host's
 * /usr/bin/etcd with TLS, client certificates and auth, daemons and client configured through
 * REBOUND_PROPERTIES), with running tasks kept (the default): the sources running at the kill are
 * adopted, none deployed again. Plus the one-line messages when the etcd binary or the etcd
 * service is missing, and a peer on the compose network without credentials refused by etcd.
 * .ci/run installs etcd-server.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, log, run } from './docker.js';
import { composeFailoverSuite } from './failover-suite.js';

/** The lines our CLI and scripts printed, without docker-compose 1.29's own around them. */
const ours = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('rebound:'));

/**
 * Run in a container of its own on the compose network: what etcd answers to a peer that lacks
 * one credential or another, each try writing a leader record that points at the peer. One JSON
 * line: try -> `error <code>` (no answer), `HTTP <status> <body>`, `refused <message>` or `ok`.
 */
const PEER_TRIES = `
import { readFileSync } from 'node:fs';
import { request as http } from 'node:http';
import { request as https } from 'node:https';
import { Etcd3 } from 'etcd3';
const file = (name) => readFileSync('/etcd-client/' + name);
const record = JSON.stringify({ jobmasterId: 'intruder', address: 'intruder:6123' });
const body = JSON.stringify({
  key: Buffer.from('/compose/leader').toString('base64'),
  value: Buffer.from(record).toString('base64'),
});
const gateway = (request, url, tls) =>
  new Promise((resolve) => {
    const req = request(url, { method: 'POST', timeout: 10000, ...tls }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve('HTTP ' + res.statusCode + ' ' + text.trim()));
    });
    req.on('error', (err) => resolve('error ' + (err.code ?? err.message)));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.end(body);
  });
const grpcPut = async (auth, key) => {
  const client = new Etcd3({
    hosts: 'https://etcd:2379',
    credentials: { rootCertificate: file('ca.pem'), certChain: file('client.pem'), privateKey: file('client-key.pem') },
    ...(auth ? { auth } : {}),
  });
  try {
    await client.put(key).value(record);
    return 'ok';
  } catch (err) {
    return 'refused ' + err.message.split('\\n')[0];
  } finally {
    client.close();
  }
};
const rebound = { username: 'rebound', password: file('rebound-password').toString('utf8').trim() };
console.log(JSON.stringify({
  plainHttp: await gateway(http, 'http://etcd:2379/v3/kv/put', {}),
  tlsWithoutCertificate: await gateway(https, 'https://etcd:2379/v3/kv/put', { ca: file('ca.pem') }),
  certificateWithoutUser: await grpcPut(undefined, '/compose/leader'),
  userOutsideItsPrefix: await grpcPut(rebound, '/elsewhere/leader'),
  userInsideItsPrefix: await grpcPut(rebound, '/compose/e2e-peer-probe'),
}));
`;

composeFailoverSuite({
  name: 'etcd',
  overrides: ['docker-compose.etcd.yml'],
  extraServices: ['etcd'],
  // high-availability.storageDir of docker-compose.etcd.yml: the event log stays files there.
  eventsDir: '/rebound/storage',
  // The default, as users run it: the running sources are adopted in place.
  keepRunningTasks: true,
  beforeUp: (harness) => {
    it('says in one line when the etcd binary or the etcd service is missing', async () => {
      const { env, data, compose } = harness();
      const preflight = join(ROOT, 'scripts/docker/preflight.sh');
      const noBinary = await run(
        'bash',
        [preflight, '--etcd'],
        { ...env, REBOUND_ETCD_BINARY: join(data, 'no-etcd') },
        60_000,
      );
      expect(noBinary.code).toBe(1);
      expect(noBinary.stderr.trim()).toBe(
        `preflight: no etcd binary at ${join(data, 'no-etcd')} for the etcd service; install it on this host (apt-get install -y etcd-server) or set REBOUND_ETCD_BINARY to one`,
      );
      expect((await run('bash', [preflight, '--etcd'], env, 60_000)).stdout).toMatch(
        /^preflight: ok \(.*etcd Version: 3\.\d+\.\d+ at \/usr\/bin\/etcd\)/,
      );

      // The client with no etcd ever started: the etcd service has not made the client's
      // credentials yet. The bounded wait of client.sh, then one line ...
      const early = await compose(['run', '--rm', '-T', '-e', 'REBOUND_CLIENT_WAIT=2', 'client', 'list'], 120_000);
      expect(early.code).toBe(1);
      expect(ours(early.stderr)).toHaveLength(1);
      expect(ours(early.stderr)[0]).toMatch(
        /^rebound: the cluster is not ready after 2 s: etcd https:\/\/etcd:2379 cannot be asked yet: cannot read high-availability\.etcd\.password-file \/etcd-client\/rebound-password \(ENOENT\); start it with 'docker compose -f docker-compose.yml -f docker-compose.etcd.yml up -d'/,
      );
      // ... and the CLI's own, for `leader` (which does not wait): the key and the file.
      const leader = await compose(['run', '--rm', '-T', 'client', 'leader', '--id'], 120_000);
      expect(leader.code).toBe(1);
      expect(ours(leader.stderr)).toHaveLength(1);
      expect(ours(leader.stderr)[0]).toMatch(
        /^rebound: high-availability\.etcd\.password-file: cannot read \/etcd-client\/rebound-password \(ENOENT\)/,
      );
    });
  },
  afterFailover: async ({ compose }, survivor) => {
    // Leadership and the process endpoints lived in etcd only: the HA directory is empty (no lease,
    // no leader.json, no endpoints/); the job's files are in high-availability.storageDir.
    const ls = await compose(
      ['exec', '-T', survivor, 'sh', '-c', 'ls /rebound/ha; echo --; ls /rebound/storage/jobs | wc -l'],
      60_000,
    );
    expect(ls.code).toBe(0);
    expect(ls.stdout.trim().split('\n')).toEqual(['--', '1']);

    // What the daemons see of etcd's credentials: the CA, a client certificate and rebound's
    // password, owned by the image's user and closed to others; not the CA key, not root's password.
    const files = await compose(
      ['exec', '-T', survivor, 'sh', '-c', 'cd /etcd-client && stat -c "%a %u %n" *'],
      60_000,
    );
    expect(files.code, files.stderr).toBe(0);
    expect(files.stdout.trim().split('\n')).toEqual([
      '600 10001 ca.pem',
      '600 10001 client-key.pem',
      '600 10001 client.pem',
      '600 10001 rebound-password',
    ]);

    // A peer on the compose network with less than all three (CA, certificate, user) cannot write
    // the leader record; with all three it writes under /compose/ only.
    const peer = await compose(
      ['run', '--rm', '-T', '--no-deps', '--entrypoint', 'node', 'client', '--input-type=module', '-e', PEER_TRIES],
      120_000,
    );
    expect(peer.code, peer.stderr).toBe(0);
    const tries = JSON.parse(peer.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, string>;
    log(`a peer on the compose network: ${JSON.stringify(tries)}`);
    // The TLS listener closes a plain HTTP connection without an answer.
    expect(tries.plainHttp).toMatch(/^error /);
    // --client-cert-auth: the handshake fails without a client certificate.
    expect(tries.tlsWithoutCertificate).toMatch(/^error /);
    // Auth: the certificate names no user (no CN), so a request with no token is nobody's.
    expect(tries.certificateWithoutUser).toMatch(/^refused .*(user name is empty|permission denied)/);
    // The role: readwrite on /compose/, nothing else.
    expect(tries.userOutsideItsPrefix).toMatch(/^refused .*permission denied/);
    expect(tries.userInsideItsPrefix).toBe('ok');
    // The leader record is still the survivor's.
    const leader = await compose(['run', '--rm', '-T', 'client', 'leader', '--id'], 120_000);
    expect(leader.stdout.trim()).toBe(survivor);
  },
});
