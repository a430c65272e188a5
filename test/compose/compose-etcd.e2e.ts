/**
 * `npm run test:compose`, etcd: the same failover as compose.e2e.ts on the README's etcd variant
 * (`-f docker-compose.yml -f docker-compose.etcd.yml`: a one-member etcd running the host's
 * /usr/bin/etcd, daemons and client configured through REBOUND_PROPERTIES), with running tasks
 * kept (the default): the sources running at the kill are adopted, none deployed again. Plus the
 * one-line messages when the etcd binary or the etcd service is missing. .ci/run installs
 * etcd-server.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, run } from './docker.js';
import { composeFailoverSuite } from './failover-suite.js';

/** The lines our CLI and scripts printed, without docker-compose 1.29's own around them. */
const ours = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('rebound:'));

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

      // The client with no etcd running: the bounded wait of client.sh, then one line ...
      const early = await compose(['run', '--rm', '-T', '-e', 'REBOUND_CLIENT_WAIT=2', 'client', 'list'], 120_000);
      expect(early.code).toBe(1);
      expect(ours(early.stderr)).toHaveLength(1);
      expect(ours(early.stderr)[0]).toMatch(
        /^rebound: the cluster is not ready after 2 s: etcd http:\/\/etcd:2379 does not answer \(.*\); start it with 'docker compose -f docker-compose.yml -f docker-compose.etcd.yml up -d'/,
      );
      // ... and the CLI's own, for `leader` (which does not wait): the key, the endpoint, the fix.
      const leader = await compose(['run', '--rm', '-T', 'client', 'leader', '--id'], 120_000);
      expect(leader.code).toBe(1);
      expect(ours(leader.stderr)).toHaveLength(1);
      expect(ours(leader.stderr)[0]).toMatch(
        /^rebound: reading \/compose\/leader at etcd http:\/\/etcd:2379 failed \(.*\); check that etcd runs there or fix high-availability.etcd.endpoints$/,
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
  },
});
