import * as grpc from '@grpc/grpc-js';
import {
  Configuration,
  ErrorCode,
  bindServer,
  handleUnary,
  loadProto,
  packSubpartitionBytes,
  partitionKey,
  shutdownServer,
  silentLogger,
  systemClock,
} from '@rebound/core';
import type { Clock, ResultPartitionId__Output, ShuffleWorkerServiceHandlers } from '@rebound/core';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteShuffleMaster } from './remote-shuffle-master.js';
import { JobPlacements } from './remote-shuffle-state.js';
import type { PartitionHolder, PartitionWithMetrics } from './shuffle-master.js';
import { ShuffleWorkerRegistry } from './shuffle-worker-registry.js';

const JOB = 'job-1';
const TM = { task_manager_id: 'tm-1', address: '127.0.0.1:1' };
const pid = (vertex: string, subtask: number, attempt = 0, epoch = 1): ResultPartitionId__Output => ({
  job_id: JOB,
  vertex_id: vertex,
  subtask,
  attempt,
  epoch,
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface JobEvents {
  lost: { ids: ResultPartitionId__Output[]; reason: string }[];
  reported: { reports: readonly PartitionWithMetrics[]; from?: PartitionHolder }[];
}

function setUp(
  replicas: number,
  clock: Clock = systemClock,
): { master: RemoteShuffleMaster; workers: ShuffleWorkerRegistry; events: JobEvents } {
  const events: JobEvents = { lost: [], reported: [] };
  const ref: { master?: RemoteShuffleMaster } = {};
  const workers = new ShuffleWorkerRegistry({
    epoch: 1,
    jobmasterId: 'jm-1',
    config: Configuration.of({
      'heartbeat.interval': '100 ms',
      'heartbeat.timeout': '1 s',
      'shuffle.remote.exclusion-timeout': '5 s',
    }),
    listener: {
      onShuffleWorkerRegistered: (w) => ref.master?.onShuffleWorkerRegistered(w),
      onShuffleWorkerLost: (id, reason) => ref.master?.onShuffleWorkerLost(id, reason),
    },
    liveJobs: () => [JOB],
    logger: silentLogger(),
    clock,
  });
  cleanups.push(() => workers.close());
  const master = new RemoteShuffleMaster({ epoch: 1, workers, logger: silentLogger() });
  ref.master = master;
  master.registerJob({
    jobId: JOB,
    jobConfig: Configuration.of({ 'shuffle.remote.replicas': String(replicas) }),
    partitionsReported: (reports, from) => events.reported.push({ reports, from }),
    partitionsLost: (ids, reason) => events.lost.push({ ids: [...ids], reason }),
  });
  return { master, workers, events };
}

function register(workers: ShuffleWorkerRegistry, id: string, address = `127.0.0.1:${id.length}`): void {
  workers.register({ worker_id: id, address, epoch: 1, session_id: `session-${id}`, jobs_with_partitions: [] });
}

describe('RemoteShuffleMaster', () => {
  it('defers a producer while no shuffle worker is registered', () => {
    const { master } = setUp(1);
    expect(() => master.registerPartitionWithProducer(JOB, pid('map', 0), TM)).toThrow(
      expect.objectContaining({ code: ErrorCode.UNAVAILABLE }),
    );
  });

  it('spreads partitions over the workers, with as many replicas as asked for and as exist', () => {
    const { master, workers } = setUp(2);
    register(workers, 'sw-1');
    // One worker: one copy (fewer than asked for, said in a warning).
    expect(master.registerPartitionWithProducer(JOB, pid('map', 0), TM).map((w) => w.worker_id)).toEqual(['sw-1']);
    register(workers, 'sw-2');
    register(workers, 'sw-3');
    const placed = [1, 2, 3].map((s) => master.registerPartitionWithProducer(JOB, pid('map', s), TM));
    for (const p of placed) expect(new Set(p.map((w) => w.worker_id)).size).toBe(2);
    const counts = new Map<string, number>();
    for (const w of [{ worker_id: 'sw-1' }, ...placed.flat()])
      counts.set(w.worker_id, (counts.get(w.worker_id) ?? 0) + 1);
    // 7 copies over 3 workers: none holds more than one above another.
    expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
    expect(master.holdersOf(JOB, pid('map', 2), TM).map((h) => h.id)).toEqual(placed[1]!.map((w) => w.worker_id));
  });

  it('places nothing on a worker a producer could not reach, until it registers again or the exclusion ends', () => {
    let now = 1_000;
    const { master, workers } = setUp(2, { now: () => now });
    for (const id of ['sw-1', 'sw-2', 'sw-3']) register(workers, id);
    const placedOn = (s: number): string[] =>
      master.registerPartitionWithProducer(JOB, pid('map', s), TM).map((w) => w.worker_id);
    master.excludeWorkers(['sw-2'], 'connect ECONNREFUSED');
    for (let s = 0; s < 4; s++) expect(placedOn(s).sort()).toEqual(['sw-1', 'sw-3']);
    // Restarted: it registers again and is placed at once.
    register(workers, 'sw-2', '127.0.0.1:9');
    expect([0, 1, 2, 3].flatMap((s) => placedOn(10 + s))).toContain('sw-2');
    master.excludeWorkers(['sw-2'], 'stalled');
    expect(placedOn(20).sort()).toEqual(['sw-1', 'sw-3']);
    now += 5_001;
    expect([0, 1, 2].flatMap((s) => placedOn(30 + s))).toContain('sw-2');
    // Every worker excluded: better an excluded worker than none.
    master.excludeWorkers(['sw-1', 'sw-2', 'sw-3'], 'all unreachable');
    expect(placedOn(40)).toHaveLength(2);
  });

  it('restores placements from a full snapshot and the increments after it', () => {
    const { master, workers } = setUp(1);
    register(workers, 'sw-1');
    register(workers, 'sw-2');
    master.registerPartitionWithProducer(JOB, pid('map', 0), TM);
    const full = master.snapshotState({ jobId: JOB, vertexFinished: true })!;
    expect(full.isIncremental()).toBe(false);
    // Nothing new: no increment to record.
    expect(master.snapshotState({ jobId: JOB, vertexFinished: false })).toBeUndefined();
    const second = master.registerPartitionWithProducer(JOB, pid('map', 1), TM);
    const inc = master.snapshotState({ jobId: JOB, vertexFinished: false })!;
    expect(inc.isIncremental()).toBe(true);

    const next = setUp(1);
    next.master.restoreState(JOB, [full, inc]);
    expect(next.master.holdersOf(JOB, pid('map', 1), TM)).toEqual([
      { kind: 'shuffle-worker', id: second[0]!.worker_id, address: second[0]!.address },
    ]);
    expect(next.master.holdersOf(JOB, pid('map', 0), TM)).toHaveLength(1);
    // A partition no snapshot names may be on any worker the job used.
    expect(
      next.master
        .holdersOf(JOB, pid('map', 7), TM)
        .map((h) => h.id)
        .sort(),
    ).toEqual(['sw-1', 'sw-2']);
  });

  it('a released partition leaves the next increment, and a full snapshot replaces all before it', () => {
    const a = new JobPlacements();
    a.add({ id: pid('map', 0), workers: [{ worker_id: 'sw-1', address: 'x' }] });
    a.add({ id: pid('map', 1), workers: [{ worker_id: 'sw-1', address: 'x' }] });
    const full = a.snapshot(true)!;
    a.release(partitionKey(pid('map', 0)));
    const inc = a.snapshot(false)!;
    const b = new JobPlacements();
    b.add({ id: pid('other', 0), workers: [] });
    b.apply(full, false);
    b.apply(inc, true);
    expect(b.all().map((p) => p.id.subtask)).toEqual([1]);
    expect(() => b.apply(new TextEncoder().encode('{"v":2}'), true)).toThrow(/version 1/);
  });

  it('loses a partition only when every worker that holds it is lost', () => {
    const { master, workers, events } = setUp(2);
    register(workers, 'sw-1');
    register(workers, 'sw-2');
    master.registerPartitionWithProducer(JOB, pid('map', 0), TM);
    workers.remove('sw-1', 'killed');
    expect(events.lost).toEqual([]);
    workers.remove('sw-2', 'killed');
    expect(events.lost.map((l) => l.ids.map((i) => i.subtask))).toEqual([[0]]);
    expect(events.lost[0]!.reason).toMatch(/sw-2 lost/);
  });

  it('asks every worker, and each that registers later, what it holds of a recovering job', async () => {
    const listed: string[] = [];
    const worker = async (id: string): Promise<string> => {
      const server = new grpc.Server();
      const handlers: Partial<ShuffleWorkerServiceHandlers> = {
        ListPartitions: handleUnary((req) => {
          listed.push(`${id}:${req.job_id}:${req.session_id}`);
          return {
            partitions: [
              {
                partition_id: pid('map', id === 'sw-1' ? 0 : 1),
                num_subpartitions: 1,
                total_bytes: 5,
                packed_subpartition_bytes: packSubpartitionBytes([5]),
              },
            ],
          };
        }, silentLogger()),
      };
      server.addService(loadProto().ShuffleWorkerService.service, handlers as ShuffleWorkerServiceHandlers);
      const port = await bindServer(server, '127.0.0.1', 0, grpc.ServerCredentials.createInsecure());
      cleanups.push(() => shutdownServer(server));
      return `127.0.0.1:${port}`;
    };
    const { master, workers, events } = setUp(1);
    register(workers, 'sw-1', await worker('sw-1'));
    master.notifyPartitionRecoveryStarted(JOB);
    register(workers, 'sw-2', await worker('sw-2'));
    await expect.poll(() => events.reported.length).toBe(2);
    expect(listed.sort()).toEqual([`sw-1:${JOB}:session-sw-1`, `sw-2:${JOB}:session-sw-2`]);
    expect(events.reported.map((r) => r.from?.id).sort()).toEqual(['sw-1', 'sw-2']);
    const all = await master.getAllPartitionWithMetrics(JOB);
    expect(all.map((r) => `${r.holder.id}:${r.partition.partition_id!.subtask}`).sort()).toEqual(['sw-1:0', 'sw-2:1']);
  });
});
