import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RecoveryReport } from '@rebound/core';
import { observeEventStores } from '@rebound/event-store';
import type { JobGraphStore } from '@rebound/ha';
import { JobRecords } from '../job-records.js';
import type { LeaderView } from './leader-view.js';

export interface JobMasterMetrics {
  readonly registry: Registry;
  close(): void;
}

const JOB_STATES = ['CREATED', 'RUNNING', 'RECONCILING', 'CANCELLING', 'FINISHED', 'FAILED', 'CANCELED'] as const;

/** Every job's recovery reports, and how many jobs' reports are damaged (counted as none). */
async function allRecoveries(store: JobGraphStore): Promise<{ reports: RecoveryReport[]; damaged: number }> {
  const records = new JobRecords(store);
  const reports: RecoveryReport[] = [];
  let damaged = 0;
  for (const jobId of await store.listJobIds().catch((): string[] => [])) {
    const stored = await records.recoveries(jobId);
    reports.push(...stored.reports);
    if (stored.damage) damaged++;
  }
  return { reports, damaged };
}

const num = (v: unknown): number => Number(v ?? 0);

/**
 * Prometheus series of a JobMaster (`rebound_*`), served at `/metrics` on its REST port. Cluster
 * facts (jobs, recoveries) come from the leader only, so summing over JobMasters never counts
 * twice; leadership, epoch, event-store and process series come from every JobMaster.
 * Recovery series are read from the recovery reports kept in the HA directory at scrape time,
 * so a new leader exports every failover the cluster went through, not only its own.
 */
export function createJobMasterMetrics(opts: {
  store: JobGraphStore;
  jobmasterId: string;
  leader: () => LeaderView | undefined;
}): JobMasterMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ jobmaster_id: opts.jobmasterId });
  collectDefaultMetrics({ register: registry, prefix: 'rebound_process_' });
  const store = opts.store;

  new Gauge({
    name: 'rebound_jobmaster_leader',
    help: '1 while this JobMaster is the leader, else 0.',
    registers: [registry],
    collect() {
      this.set(opts.leader() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'rebound_jobmaster_epoch',
    help: 'Leader epoch (fencing token) of this JobMaster while it leads; 0 on a standby.',
    registers: [registry],
    collect() {
      this.set(opts.leader()?.epoch ?? 0);
    },
  });
  new Gauge({
    name: 'rebound_jobs',
    help: 'Jobs by state (leader only).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const l = opts.leader();
      if (!l) return;
      const counts = new Map<string, number>(JOB_STATES.map((s) => [s, 0]));
      for (const j of await l.list()) counts.set(j.state ?? 'CREATED', (counts.get(j.state ?? 'CREATED') ?? 0) + 1);
      for (const [state, v] of counts) this.set({ state }, v);
    },
  });
  new Gauge({
    name: 'rebound_taskmanagers_registered',
    help: 'TaskManagers registered with the leader (leader only).',
    registers: [registry],
    collect() {
      const l = opts.leader();
      this.set(l ? l.registry.overview().length : 0);
    },
  });
  new Gauge({
    name: 'rebound_shuffle_workers_registered',
    help: 'Shuffle workers registered with the leader (remote shuffle; leader only).',
    registers: [registry],
    collect() {
      this.set(opts.leader()?.shuffleWorkerOverview().length ?? 0);
    },
  });
  new Gauge({
    name: 'rebound_shuffle_worker_partition_bytes',
    help: 'Bytes of finished partitions each registered shuffle worker holds, as its last heartbeat said (leader only).',
    labelNames: ['worker_id'],
    registers: [registry],
    collect() {
      this.reset();
      for (const w of opts.leader()?.shuffleWorkerOverview() ?? []) this.set({ worker_id: w.id }, w.bytes);
    },
  });
  new Gauge({
    name: 'rebound_slots',
    help: 'Slots of the registered TaskManagers, total and free (leader only).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.reset();
      const tms = opts.leader()?.registry.overview();
      if (!tms) return;
      this.set(
        { state: 'total' },
        tms.reduce((s, t) => s + num(t.slots_total), 0),
      );
      this.set(
        { state: 'free' },
        tms.reduce((s, t) => s + num(t.slots_free), 0),
      );
    },
  });

  // Recovery series: one scrape reads the reports once for all of them.
  let reportsAt = 0;
  const none = Promise.resolve({ reports: [], damaged: 0 });
  let stored: Promise<{ reports: RecoveryReport[]; damaged: number }> = none;
  const storedRecoveries = (): Promise<{ reports: RecoveryReport[]; damaged: number }> => {
    const now = Date.now();
    if (now - reportsAt > 500) {
      reportsAt = now;
      stored = opts.leader() ? allRecoveries(store) : none;
    }
    return stored;
  };
  const recoveries = async (): Promise<RecoveryReport[]> => (await storedRecoveries()).reports;
  const sumCounter = (
    name: string,
    help: string,
    label: string,
    parts: Record<string, (r: RecoveryReport) => number>,
  ): void => {
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      async collect() {
        this.reset();
        if (!opts.leader()) return;
        const rs = await recoveries();
        for (const [value, f] of Object.entries(parts))
          this.inc(
            { [label]: value },
            rs.reduce((s, r) => s + f(r), 0),
          );
      },
    });
  };
  new Counter({
    name: 'rebound_recoveries_total',
    help: 'JobMaster failovers jobs went through, by outcome (recovered: FLIP-383 recovery; restarted: from scratch). Leader only.',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!opts.leader()) return;
      const rs = await recoveries();
      this.inc({ outcome: 'recovered' }, rs.filter((r) => !r.restarted_from_scratch).length);
      this.inc({ outcome: 'restarted' }, rs.filter((r) => r.restarted_from_scratch).length);
    },
  });
  new Gauge({
    name: 'rebound_recovery_reports_damaged_jobs',
    help: 'Jobs whose stored recovery reports cannot be read, counted as no recoveries above (REST: damage on /jobs/:id/recoveries). Leader only.',
    registers: [registry],
    async collect() {
      this.set(opts.leader() ? (await storedRecoveries()).damaged : 0);
    },
  });
  sumCounter(
    'rebound_recovery_phase_duration_seconds_total',
    'Time spent in each recovery phase, summed over failovers (detection: old leader last heard to new leader elected). Leader only.',
    'phase',
    {
      detection: (r) =>
        num(r.old_leader_last_heard_ms) > 0
          ? Math.max(0, num(r.elected_at_ms) - num(r.old_leader_last_heard_ms)) / 1000
          : 0,
      replay: (r) => num(r.replay_ms) / 1000,
      reconcile: (r) => num(r.reconnect_wait_ms) / 1000,
      total: (r) => (num(r.finished_at_ms) > 0 ? Math.max(0, num(r.finished_at_ms) - num(r.elected_at_ms)) / 1000 : 0),
    },
  );
  new Gauge({
    name: 'rebound_recovery_last_phase_duration_seconds',
    help: 'Duration of each phase of the most recent recovery. Leader only.',
    labelNames: ['phase'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!opts.leader()) return;
      const last = (await recoveries()).sort((a, b) => num(a.finished_at_ms) - num(b.finished_at_ms)).at(-1);
      if (!last) return;
      this.set(
        { phase: 'detection' },
        num(last.old_leader_last_heard_ms) > 0
          ? Math.max(0, num(last.elected_at_ms) - num(last.old_leader_last_heard_ms)) / 1000
          : 0,
      );
      this.set({ phase: 'replay' }, num(last.replay_ms) / 1000);
      this.set({ phase: 'reconcile' }, num(last.reconnect_wait_ms) / 1000);
      this.set(
        { phase: 'total' },
        num(last.finished_at_ms) > 0 ? Math.max(0, num(last.finished_at_ms) - num(last.elected_at_ms)) / 1000 : 0,
      );
    },
  });
  sumCounter(
    'rebound_recovery_tasks_total',
    'Finished tasks a recovery kept (reused) or had to run again (rerun). Leader only.',
    'outcome',
    {
      reused: (r) => num(r.executions_recovered),
      rerun: (r) => num(r.executions_reset),
    },
  );
  sumCounter(
    'rebound_recovery_partitions_total',
    'Result partitions a recovery reused from TaskManagers, released, or found missing. Leader only.',
    'outcome',
    {
      reused: (r) => num(r.partitions_reused),
      released: (r) => num(r.partitions_released),
      missing: (r) => num(r.partitions_missing),
    },
  );
  sumCounter(
    'rebound_recovery_partition_bytes_total',
    'Bytes of the partitions a recovery reused or released. Leader only.',
    'outcome',
    {
      reused: (r) => num(r.partition_bytes_reused),
      released: (r) => num(r.partition_bytes_released),
    },
  );
  sumCounter(
    'rebound_recovery_torn_tail_bytes_total',
    'Bytes of torn event-log tails recoveries cut off. Leader only.',
    'kind',
    {
      discarded: (r) => num(r.torn_tail_bytes_discarded),
    },
  );
  new Gauge({
    name: 'rebound_tracked_partitions',
    help: 'Finished result partitions of running jobs the leader tracks on TaskManagers (leader only).',
    registers: [registry],
    collect() {
      this.set([...(opts.leader()?.trackedPartitions().values() ?? [])].reduce((s, t) => s + t.partitions, 0));
    },
  });

  // Event store: fed by the stores of the jobs this process leads.
  const appends = new Counter({
    name: 'rebound_event_store_appends_total',
    help: 'Job events appended to the JobEventStore.',
    registers: [registry],
  });
  const appendBytes = new Counter({
    name: 'rebound_event_store_append_bytes_total',
    help: 'Bytes of the job events appended (framed).',
    registers: [registry],
  });
  const written = new Counter({
    name: 'rebound_event_store_written_bytes_total',
    help: 'Bytes the JobEventStore wrote to its files.',
    registers: [registry],
  });
  const flush = new Histogram({
    name: 'rebound_event_store_flush_duration_seconds',
    help: 'Latency of a JobEventStore flush (write and, with durability fsync, fsync).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const unobserve = observeEventStores({
    onAppend: (bytes) => {
      appends.inc();
      appendBytes.inc(bytes);
    },
    onFlush: (ms, bytes) => {
      flush.observe(ms / 1000);
      written.inc(bytes);
    },
  });

  return { registry, close: unobserve };
}
