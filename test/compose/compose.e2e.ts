/**
 * `npm run test:compose`, HA directory: the README's Docker compose path, for real (the scenario
 * is failover-suite.ts's), plus the one-line messages of what is missing before the cluster runs.
 * `ensure-docker.sh` has made Docker available; global-setup.ts has built the image.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, run } from './docker.js';
import { composeFailoverSuite } from './failover-suite.js';

composeFailoverSuite({
  name: 'file',
  overrides: [],
  extraServices: [],
  eventsDir: '/rebound/ha',
  // FLIP-383's replay alone: what reran of the running sources is in the report, exactly as ever.
  keepRunningTasks: false,
  beforeUp: (harness) => {
    it('says in one line what is missing: engine, data directory, a healthy cluster', async () => {
      const { env, data, compose } = harness();
      const preflight = join(ROOT, 'scripts/docker/preflight.sh');
      const noEngine = await run(
        'bash',
        [preflight],
        { ...env, DOCKER_HOST: `unix://${join(data, 'no-docker.sock')}` },
        60_000,
      );
      expect(noEngine.code).toBe(1);
      expect(noEngine.stderr.trim()).toMatch(/^preflight: no Docker engine answers \(.*\); start dockerd/);
      const noData = await run('bash', [preflight], { ...env, REBOUND_DATA: join(data, 'missing') }, 60_000);
      expect(noData.code).toBe(1);
      expect(noData.stderr.trim()).toBe(
        `preflight: data directory ${join(data, 'missing')} does not exist; create it (mkdir -p ${join(data, 'missing')}/input) or set REBOUND_DATA to one`,
      );
      expect((await run('bash', [preflight], env, 60_000)).stdout).toMatch(/^preflight: ok/);

      // The client before the cluster: a bounded wait, then one line saying so.
      const early = await compose(['run', '--rm', '-T', '-e', 'REBOUND_CLIENT_WAIT=2', 'client', 'list'], 120_000);
      expect(early.code).toBe(1);
      // docker-compose 1.29 adds its own lines (container creation, the exit code) around ours.
      const ours = early.stderr.split('\n').filter((l) => l.startsWith('rebound:'));
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatch(/^rebound: the cluster is not ready after 2 s: no JobMaster has been elected/);
    });
  },
});
