import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '@rebound/ha/testing';
import { type CliResult, LocalCluster, runRebound, suiteFailed } from '../harness.js';
import { HISTOGRAM_JOB, expectedHistogram, histogramArgs } from '../recovery-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from '../util.js';

const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

function defines(config: Record<string, string>): string[] {
  return Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
}

function expectOneLine(r: CliResult, pattern: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.code, r.stderr).toBe(1);
}

/**
 * A cluster on an etcd that runs as it should on a network: client TLS with certificates of its
 * own CA, client certificates required, and auth enabled (issue 25, item 3). A JobMaster leads and
 * runs a job over it; a wrong password or a missing CA stops a daemon's start in one line.
 */
describe.skipIf(!available)('a local cluster on an etcd with TLS and auth', () => {
  let etcd: EtcdCluster;
  let cluster: LocalCluster;
  let data: string;
  let haConfig: Record<string, string>;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1, tls: true, clientCertAuth: true, auth: true });
    haConfig = {
      'high-availability.type': 'etcd',
      ...etcd.clientConfig(),
      // etcd leases count in seconds; a loaded 2-core machine needs slack for keep-alives.
      'high-availability.lease.timeout': '3 s',
      'high-availability.lease.renew-interval': '500 ms',
    };
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 2, slots: 2, config: haConfig });
    data = await makeTempDir('rebound-it-etcd-secured-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    await etcd?.stopAll();
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('a JobMaster leads through the secured etcd and runs a job with exact output', async () => {
    expect(haConfig['high-availability.etcd.endpoints']).toMatch(/^https:/);
    const leader = await cluster.leader();
    expect(leader).toBeDefined();
    // The CLI finds the leader through etcd with the same credentials (cluster.json's configuration).
    const r = await cluster.rebound(['leader', '--json', '--cluster', cluster.workdir]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: leader!.jobmasterId, serving: true });
    const out = join(data, 'out');
    const { jobId } = await cluster.submit(HISTOGRAM_JOB, histogramArgs({ records: 500, keys: 13, output: out }));
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(final.state).toBe('FINISHED');
    expect(diffMaps(expectedHistogram(500, 13), await readSinkOutput(out))).toEqual([]);
  });

  const jobmaster = (name: string, config: Record<string, string>): string[] => [
    'jobmaster',
    '--ha-dir',
    join(data, `${name}-ha`),
    '--id',
    name,
    '--log-file',
    join(data, `${name}.log`),
    '-D',
    'rest.port=0',
    '-D',
    `security.auth.token-file=${join(cluster.workdir, 'secret')}`,
    '-D',
    'high-availability.etcd.request-timeout=2 s',
    ...defines(config),
  ];

  it('a JobMaster with a wrong etcd password refuses to start, in one line naming password-file', async () => {
    const wrong = join(data, 'wrong-password');
    await writeFile(wrong, 'not-the-password\n', { mode: 0o600 });
    const r = await runRebound(
      jobmaster('jm-wrong-password', { ...haConfig, 'high-availability.etcd.password-file': wrong }),
      { timeoutMs: 60_000 },
    );
    expectOneLine(
      r,
      /^rebound: etcd https:\/\/localhost:\d+ refused user 'rebound': wrong password or unknown user; fix high-availability\.etcd\.password-file or high-availability\.etcd\.username$/,
    );
  });

  it('a JobMaster without the etcd CA refuses to start, in one line naming tls.ca-file', async () => {
    const { ['high-availability.etcd.tls.ca-file']: _ca, ...noCa } = haConfig;
    const r = await runRebound(jobmaster('jm-no-ca', noCa), { timeoutMs: 90_000 });
    expectOneLine(r, /^rebound: .* at etcd https:\/\/localhost:\d+ failed .*set high-availability\.etcd\.tls\.ca-file/);
  });
});
