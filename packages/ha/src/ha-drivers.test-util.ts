import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, silentLogger, type JobGraph } from '@rebound/core';
import { EtcdHaServices } from './etcd/etcd-ha-services.js';
import { HaPaths } from './file/ha-dir.js';
import type { HighAvailabilityServices, LeaderElection } from './ha-services.js';
import { createHaServices } from './ha-services-factory.js';
import { JOB_STATUS_FILE } from './job-graph-store.js';
import { type EtcdCluster, startEtcdCluster } from './testing/etcd-cluster.js';
import { RecordingContender } from './testing/recording-contender.js';

/**
 * The HA backends for the *.drivers.test.ts files, which run the behaviour both backends share
 * against each driver. The file half runs with the unit tests; the etcd half needs a real etcd and
 * runs under `npm run test:etcd`, which sets REBOUND_HA_DRIVER_TESTS=etcd
 * (test/etcd/vitest.config.ts). Backend-specific behaviour (lease directory races, a hand-written
 * leader.json, torn files, steppedDown marks, watch reconnects) stays in each backend's own tests.
 */
export interface Backend {
  readonly name: 'file' | 'etcd';
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A new, empty cluster state (a new HA directory, or etcd cluster id and storage directory). */
  reset(): Promise<void>;
  /** A fresh HA services object on the current cluster state; `extra` overrides configuration. */
  services(extra?: Record<string, string>): HighAvailabilityServices;
  /** Takes the lease away behind the leader's back (as when it was paused past it). */
  stealLease(ha: HighAvailabilityServices): Promise<void>;
  /** Where the leader record is kept, as a "no leader" message names it. */
  leaderRecordLocation(): string;
  /** Overwrites a stored job's terminal status with bytes that are not one. */
  damageStatus(ha: HighAvailabilityServices, jobId: string): Promise<void>;
}

/** Lease timings short enough for takeovers within a test. */
const LEASE = {
  'high-availability.lease.timeout': '2 s',
  'high-availability.lease.renew-interval': '300 ms',
  'high-availability.lease.poll-interval': '50 ms',
};

function fileBackend(): Backend {
  let haDir = '';
  const dirs: string[] = [];
  return {
    name: 'file',
    async setUp() {},
    async tearDown() {
      await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
    async reset() {
      haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-drivers-'));
      dirs.push(haDir);
    },
    services: (extra) => createHaServices(Configuration.of({ ...LEASE, ...extra }), haDir),
    async stealLease() {
      await rm(HaPaths.lockDir(haDir), { recursive: true, force: true });
    },
    leaderRecordLocation: () => haDir,
    async damageStatus(ha, jobId) {
      await writeFile(join(HaPaths.jobDir(ha.storageDir, jobId), JOB_STATUS_FILE), 'not json');
    },
  };
}

function etcdBackend(): Backend {
  let etcd: EtcdCluster | undefined;
  let storage = '';
  let clusterId = '';
  let seq = 0;
  const dirs: string[] = [];
  const connection = (ha: HighAvailabilityServices) => (ha as EtcdHaServices).connection;
  return {
    name: 'etcd',
    async setUp() {
      etcd = await startEtcdCluster({ members: 1 });
    },
    async tearDown() {
      await etcd?.stopAll();
      await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
    async reset() {
      clusterId = `d${process.pid}-${++seq}`;
      storage = await mkdtemp(join(tmpdir(), 'rebound-ha-drivers-etcd-'));
      dirs.push(storage);
    },
    services: (extra) =>
      createHaServices(
        Configuration.of({
          ...LEASE,
          ...extra,
          'high-availability.type': 'etcd',
          'high-availability.etcd.endpoints': etcd!.endpointList,
          'high-availability.cluster-id': clusterId,
          'high-availability.storageDir': storage,
          'high-availability.etcd.request-timeout': '3 s',
        }),
        storage,
      ),
    async stealLease(ha) {
      await connection(ha).client.delete().key(connection(ha).keys.leader);
    },
    leaderRecordLocation: () => `/${clusterId}/leader`,
    async damageStatus(ha, jobId) {
      await connection(ha).client.put(connection(ha).keys.jobStatus(jobId)).value('not json');
    },
  };
}

/** The backends REBOUND_HA_DRIVER_TESTS names (default: file), new objects for each test file. */
export function backendsUnderTest(): Backend[] {
  const wanted = (process.env.REBOUND_HA_DRIVER_TESTS ?? 'file').split(',');
  return [fileBackend(), etcdBackend()].filter((b) => wanted.includes(b.name));
}

/**
 * What a describe block over one backend works with. Its hooks call setUp, tearDown and cleanUp
 * (this module imports no test framework). Every services object and election made here is
 * closed by cleanUp.
 */
export class DriverFixture {
  private readonly open: HighAvailabilityServices[] = [];
  private readonly elections: LeaderElection[] = [];

  constructor(readonly backend: Backend) {}

  readonly setUp = (): Promise<void> => this.backend.setUp();
  readonly tearDown = (): Promise<void> => this.backend.tearDown();
  readonly cleanUp = async (): Promise<void> => {
    await Promise.all(this.elections.splice(0).map((e) => e.stop()));
    await Promise.all(this.open.splice(0).map((s) => s.close()));
  };

  services(extra?: Record<string, string>): HighAvailabilityServices {
    const s = this.backend.services(extra);
    this.open.push(s);
    return s;
  }

  /** An election for contender `id` at `<id>:9000`, not yet started. */
  contend(ha: HighAvailabilityServices, id: string): LeaderElection {
    const e = ha.createLeaderElectionService({ contenderId: id, address: `${id}:9000`, logger: silentLogger() });
    this.elections.push(e);
    return e;
  }

  /** A new services object whose contender `id` has won an election. */
  async lead(id = 'a'): Promise<{ ha: HighAvailabilityServices; election: LeaderElection; epoch: number }> {
    const ha = this.services();
    const election = this.contend(ha, id);
    const contender = new RecordingContender();
    await election.start(contender);
    return { ha, election, epoch: await contender.nextGrant(0) };
  }
}

/** A small job graph of two vertices, as a client submits it. */
export function sampleJobGraph(jobId: string, name: string, submittedAtMs: number): JobGraph {
  return {
    job_id: jobId,
    name,
    submitted_at_ms: submittedAtMs,
    job_args: ['--n', '3'],
    config: { 'parallelism.default': '2' },
    module_digest: 'abc',
    vertices: [
      {
        id: 'v1',
        name: 'Source: numbers',
        parallelism: 2,
        operator_ids: ['op1'],
        source_operator_id: 'op1',
        source_supports_batch_snapshot: true,
      },
      { id: 'v2', name: 'Sink', inputs: [{ source_vertex_id: 'v1' }], sink: null },
    ],
  };
}

/** A job module's bundle. */
export const sampleBundle = new TextEncoder().encode('export default () => 42;\n');
