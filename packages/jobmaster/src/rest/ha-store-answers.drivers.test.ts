import { createServer } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration, silentLogger, systemClock } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices, type LeaderElection } from '@rebound/ha';
import { type EtcdCluster, startEtcdCluster } from '@rebound/ha/testing';
import { JobRecords } from '../job-records.js';
import { startRestServer, type RestServer } from './rest-server.js';

/**
 * A standby with no leader to answer (none recorded, or the recorded one unreachable) answers the
 * job documents from the HA store, marked as such, on both HA drivers. The file half runs with the
 * unit tests, the etcd half under `npm run test:etcd` (REBOUND_HA_DRIVER_TESTS=etcd).
 */
interface Backend {
  readonly name: 'file' | 'etcd';
  /** Why nobody answers once the only leader gave up: the file record stays until the next leader. */
  readonly noLeader: string;
  setUp(): Promise<Record<string, string>>;
  tearDown(): Promise<void>;
}

const SECRET = 'ha-store-answers-secret-0123456789';
const FINISHED = 'f'.repeat(32);
const UNFINISHED = 'a'.repeat(32);

function fileBackend(): Backend {
  return {
    name: 'file',
    noLeader: 'the leader jm-gone has published no REST address',
    setUp: async () => ({}),
    tearDown: async () => {},
  };
}

function etcdBackend(): Backend {
  let etcd: EtcdCluster | undefined;
  return {
    name: 'etcd',
    noLeader: 'no leader is recorded in the HA store',
    async setUp() {
      etcd = await startEtcdCluster({ members: 1 });
      return {
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
        'high-availability.cluster-id': `store-answers-${process.pid}`,
      };
    },
    tearDown: async () => void (await etcd?.stopAll()),
  };
}

const wanted = (process.env.REBOUND_HA_DRIVER_TESTS ?? 'file').split(',');
const backends = [fileBackend(), etcdBackend()].filter((b) => wanted.includes(b.name));

/** A port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(backends)('a standby with no leader, on the $name driver', (backend) => {
  let dir: string;
  let config: Configuration;
  const open: HighAvailabilityServices[] = [];
  let standby: RestServer;
  const auth = { authorization: `Bearer ${SECRET}` };

  const services = (): HighAvailabilityServices => {
    const ha = createHaServices(config, dir);
    open.push(ha);
    return ha;
  };

  /** Leads as `id` until the returned election is stopped. */
  const lead = async (
    id: string,
  ): Promise<{ election: LeaderElection; epoch: number; ha: HighAvailabilityServices }> => {
    const ha = services();
    const election = ha.createLeaderElectionService({ contenderId: id, address: `${id}:9000`, logger: silentLogger() });
    const granted = new Promise<number>((resolve) => {
      void election.start({ grantLeadership: (epoch) => resolve(epoch), revokeLeadership: () => {} });
    });
    return { election, epoch: await granted, ha };
  };

  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown>; from: string | null }> => {
    const res = await fetch(`${standby.url}${path}`, { headers: auth, signal: AbortSignal.timeout(10_000) });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown>,
      from: res.headers.get('x-rebound-answered-from'),
    };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-ha-store-answers-'));
    const tokenFile = join(dir, 'secret');
    await writeFile(tokenFile, SECRET, { mode: 0o600 });
    config = Configuration.of({
      ...(await backend.setUp()),
      'high-availability.lease.timeout': '2 s',
      'high-availability.lease.renew-interval': '300 ms',
      'security.auth.token-file': tokenFile,
      'rest.bind-address': '127.0.0.1',
      'rest.port': '0',
      'rest.proxy.timeout': '2 s',
    });
    // A leader stores two jobs, ends one, and gives leadership up: nobody leads.
    const { election, epoch, ha } = await lead('jm-gone');
    const store = ha.leaderJobGraphStore(epoch);
    await store.putJob({ job_id: FINISHED, name: 'done', submitted_at_ms: 1000 }, new Uint8Array());
    await store.putJob({ job_id: UNFINISHED, name: 'halfway', submitted_at_ms: 2000 }, new Uint8Array());
    await new JobRecords(store).saveFinalStatus(FINISHED, {
      job_id: FINISHED,
      name: 'done',
      state: 'FINISHED',
      submitted_at_ms: 1000,
      finished_at_ms: 4000,
      vertices: [{ id: 'v', name: 'Source', parallelism: 2, state: 'FINISHED', tasks: { finished: 2 } }],
    });
    await store.markTerminal(FINISHED, { state: 'FINISHED', finishedAtMs: 4000 });
    await election.stop();
    standby = await startRestServer({
      id: 'jm-standby',
      ha: services(),
      config,
      logger: silentLogger(),
      clock: systemClock,
      leader: () => undefined,
    });
  });

  afterAll(async () => {
    await standby?.close();
    await Promise.all(open.map((ha) => ha.close()));
    await backend.tearDown();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers the job list, a job and the overview from the HA store, saying so', async () => {
    const before = Date.now();
    const jobs = await get('/jobs');
    expect(jobs.status).toBe(200);
    expect(jobs.body.jobs).toEqual([
      { id: FINISHED, status: 'FINISHED' },
      { id: UNFINISHED, status: 'SUSPENDED' },
    ]);
    expect(jobs.body.answeredFrom).toEqual({
      source: 'ha-store',
      jobmaster: 'jm-standby',
      asOfMs: expect.any(Number),
      reason: backend.noLeader,
    });
    const asOf = (jobs.body.answeredFrom as { asOfMs: number }).asOfMs;
    expect(asOf).toBeGreaterThanOrEqual(before);
    expect(jobs.from).toBe(`ha-store; as-of=${new Date(asOf).toISOString()}`);

    const job = await get(`/v1/jobs/${FINISHED}`);
    expect([job.status, job.body.jid, job.body.name, job.body.state, job.body.duration]).toEqual([
      200,
      FINISHED,
      'done',
      'FINISHED',
      3000,
    ]);
    expect(job.from).toMatch(/^ha-store; as-of=/);
    expect((await get(`/jobs/${UNFINISHED}`)).body.state).toBe('SUSPENDED');
    expect((await get(`/jobs/${'0'.repeat(32)}`)).status).toBe(404);

    const overview = await get('/overview');
    expect(overview.body).toMatchObject({ taskmanagers: 0, 'jobs-running': 1, 'jobs-finished': 1 });
    expect((await get('/jobs/overview')).body.jobs).toHaveLength(2);
    expect((await get(`/jobs/${FINISHED}/exceptions`)).status).toBe(200);
    // What only a leader knows stays a 503.
    expect((await get('/taskmanagers')).status).toBe(503);
  });

  it('answers from the HA store when the recorded leader cannot be reached', async () => {
    const { election, ha } = await lead('jm-dead');
    const restUrl = `http://127.0.0.1:${await closedPort()}`;
    await ha
      .endpoints()
      .publish({ id: 'jm-dead', role: 'jobmaster', address: 'jm-dead:9000', restUrl, startedAtMs: 0 });
    try {
      const jobs = await get('/jobs');
      expect(jobs.status).toBe(200);
      expect(jobs.body.answeredFrom).toMatchObject({
        reason: `the leader jm-dead at ${restUrl} could not be reached (ECONNREFUSED)`,
      });
      expect(jobs.body.jobs).toHaveLength(2);
    } finally {
      await election.stop();
    }
  });
});
