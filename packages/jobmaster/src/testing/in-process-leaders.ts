import { Configuration, decodeMessage, encodeMessage, partitionKey, silentLogger, systemClock } from '@rebound/core';
import type {
  CancelTaskRequest,
  CancelTaskResponse__Output,
  DeployTaskResponse__Output,
  DisconnectJobRequest,
  DisconnectJobResponse__Output,
  GetPartitionsRequest,
  GetPartitionsResponse__Output,
  HeldTask__Output,
  JobGraph__Output,
  PartitionWithMetrics__Output,
  RecoveryReport,
  ReleasePartitionsRequest,
  ReleasePartitionsResponse__Output,
  TaskDeploymentDescriptor,
  TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import type { Transformation } from '@rebound/api';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';
import { JobMaster } from '../job-master.js';
import { InProcessUserCode } from '../user-code/in-process-user-code.js';
import type { TaskManagerDirectory } from '../recovery/task-manager-directory.js';
import type { CommitManifest } from '../sink-committer.js';
import type { ShuffleMaster } from '../shuffle/shuffle-master.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import { TaskManagerRegistry, type RegisteredTaskManager } from '../task-manager-registry.js';

/**
 * For recovery tests in one process (as Flink's BatchJobRecoveryTest): JobMasters of successive
 * leader epochs on one real event store in a temp directory, TaskManagers stood in for by a
 * FakeTaskExecutorGateway. No gRPC call is made.
 */

export interface Deployment {
  readonly taskManagerId: string;
  /** As the TaskManager decodes it. */
  readonly tdd: TaskDeploymentDescriptor__Output;
}

/** Records what the JobMaster asks TaskManagers to do; answers with what the test put in `retained`. */
export class FakeTaskExecutorGateway implements TaskExecutorGateway {
  readonly deployed: Deployment[] = [];
  readonly canceled: string[] = [];
  readonly released: string[] = [];
  /** What GetAndRetainPartitionsWithMetrics answers, per TaskManager id. */
  readonly retained = new Map<string, PartitionWithMetrics__Output[]>();
  /** Tasks each TaskManager kept through the failover (keep-running-tasks), as it reports them. */
  readonly held = new Map<string, HeldTask__Output[]>();
  /** Whether each GetAndRetainPartitionsWithMetrics asked to adopt the kept tasks, per TaskManager id. */
  readonly adoptAsked = new Map<string, boolean>();

  /** `onPartitionsRequested`: told of each GetAndRetainPartitionsWithMetrics as it is sent. */
  constructor(
    private readonly onPartitionsRequested?: (tm: RegisteredTaskManager, req: GetPartitionsRequest) => void,
  ) {}

  async deployTask(tm: RegisteredTaskManager, tdd: TaskDeploymentDescriptor): Promise<DeployTaskResponse__Output> {
    this.deployed.push({
      taskManagerId: tm.id,
      tdd: decodeMessage<TaskDeploymentDescriptor__Output>(
        'TaskDeploymentDescriptor',
        encodeMessage('TaskDeploymentDescriptor', tdd),
      ),
    });
    return { accepted: true };
  }
  async cancelTask(_tm: RegisteredTaskManager, req: CancelTaskRequest): Promise<CancelTaskResponse__Output> {
    if (req.execution)
      this.canceled.push(
        `${req.execution.vertex_id}#${req.execution.subtask}@${req.execution.attempt}${req.deploy_epoch ? `e${req.deploy_epoch}` : ''}`,
      );
    return { found: true };
  }
  async releasePartitions(
    _tm: RegisteredTaskManager,
    req: ReleasePartitionsRequest,
  ): Promise<ReleasePartitionsResponse__Output> {
    const ids = req.partitions ?? [];
    this.released.push(
      ...ids.map((p) => partitionKey(decodeMessage('ResultPartitionId', encodeMessage('ResultPartitionId', p)))),
    );
    return { released: ids.length };
  }
  async getAndRetainPartitionsWithMetrics(
    tm: RegisteredTaskManager,
    req: GetPartitionsRequest,
  ): Promise<GetPartitionsResponse__Output> {
    this.adoptAsked.set(tm.id, req.adopt_tasks === true);
    this.onPartitionsRequested?.(tm, req);
    return { partitions: this.retained.get(tm.id) ?? [], tasks: this.held.get(tm.id) ?? [] };
  }
  async disconnectJob(_tm: RegisteredTaskManager, _req: DisconnectJobRequest): Promise<DisconnectJobResponse__Output> {
    return {};
  }

  /** Deployments of `vertexId` (all when omitted) since index `from`. */
  of(vertexId?: string, from = 0): Deployment[] {
    return this.deployed.slice(from).filter((d) => vertexId === undefined || d.tdd.execution!.vertex_id === vertexId);
  }
}

export interface Leader {
  readonly epoch: number;
  readonly job: JobMaster;
  readonly events: JobEventManager;
  readonly gateway: FakeTaskExecutorGateway;
  readonly registry: TaskManagerRegistry;
  readonly recoveries: RecoveryReport[];
  readonly committed: CommitManifest[];
}

export interface LeaderOptions {
  readonly taskManagers?: readonly string[];
  readonly slots?: number;
  /** Leader configuration (the job graph's own config wins over it). */
  readonly config?: Record<string, string>;
  /** Partitions each TaskManager reports as retained. */
  readonly retained?: ReadonlyMap<string, PartitionWithMetrics__Output[]>;
  /** Tasks each TaskManager kept through the failover. */
  readonly held?: ReadonlyMap<string, HeldTask__Output[]>;
  /** When false the commit never completes: the leader dies while committing. */
  readonly commits?: boolean;
  /** The event store's flush interval (default 10 ms). */
  readonly flushIntervalMs?: number;
  /** What the HA services know of the TaskManagers (none by default). */
  readonly taskManagerDirectory?: TaskManagerDirectory;
  /** Told of each GetAndRetainPartitionsWithMetrics the leader sends, as it sends it. */
  readonly onPartitionsRequested?: (job: JobMaster, taskManagerId: string, adoptTasks: boolean) => void;
  /** The leader's ShuffleMaster (a TaskManagerShuffleMaster by default), over its fake gateway. */
  readonly shuffleMaster?: (gateway: TaskExecutorGateway, epoch: number) => ShuffleMaster;
  /** Called with the JobMaster before its start, e.g. to read its status while it restores the job. */
  readonly beforeStart?: (job: JobMaster) => void;
}

/** Successive leaders of one job on one HA directory. */
export class InProcessLeaders {
  private leaderEpoch = 0;
  private readonly leaders: Leader[] = [];

  constructor(
    private readonly haDir: string,
    private readonly graph: JobGraph__Output,
    private readonly operators: ReadonlyMap<string, Transformation>,
  ) {}

  /** Elects a leader of the next epoch and starts the job on it (`takeover` after the first). */
  async elect(opts: LeaderOptions = {}): Promise<Leader> {
    const epoch = ++this.leaderEpoch;
    const config = Configuration.of({
      'heartbeat.timeout': '1 min',
      'restart-strategy.fixed-delay.delay': '0 ms',
      'execution.batch.job-recovery.previous-worker.recovery.timeout': '0 ms',
      // The fake TaskManagers keep no running tasks unless a test gives them `held` and turns
      // this on: otherwise reconciliation would wait the whole timeout for their reports.
      'execution.batch.job-recovery.keep-running-tasks': 'false',
      ...opts.config,
    });
    const registry = new TaskManagerRegistry(
      epoch,
      `jm-${epoch}`,
      config,
      { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} },
      silentLogger(),
      systemClock,
    );
    // Called only once the job starts, after `job` below is assigned.
    const gateway = new FakeTaskExecutorGateway((tm, req) =>
      opts.onPartitionsRequested?.(job, tm.id, req.adopt_tasks === true),
    );
    for (const [tm, partitions] of opts.retained ?? []) gateway.retained.set(tm, partitions);
    for (const [tm, tasks] of opts.held ?? []) gateway.held.set(tm, tasks);
    for (const id of opts.taskManagers ?? ['tm-1']) {
      // Never dialed: every call goes through the fake gateway.
      registry.register({
        task_manager_id: id,
        address: '127.0.0.1:9',
        slots: opts.slots ?? 8,
        epoch,
        jobs_with_retained_partitions: [this.graph.job_id],
        session_id: `session-${id}`,
      });
    }
    const events = new JobEventManager(
      new FileSystemJobEventStore({
        haDir: this.haDir,
        jobId: this.graph.job_id,
        epoch,
        jobMasterId: `jm-${epoch}`,
        currentLeaderEpoch: () => this.leaderEpoch,
        flushIntervalMs: opts.flushIntervalMs ?? 10,
      }),
      systemClock,
    );
    const recoveries = this.leaders.at(-1)?.recoveries.slice() ?? [];
    const committed: CommitManifest[] = [];
    const job: JobMaster = new JobMaster(this.graph, new InProcessUserCode(this.operators, silentLogger()), {
      epoch,
      jobmasterId: `jm-${epoch}`,
      address: '127.0.0.1:1',
      config,
      registry,
      gateway,
      shuffleMaster: opts.shuffleMaster?.(gateway, epoch),
      logger: silentLogger(),
      clock: systemClock,
      events,
      electedAtMs: Date.now(),
      taskManagerDirectory: opts.taskManagerDirectory,
      recoveries,
      saveRecoveries: async () => {},
      saveCommitManifest: async (_jobId, manifest) => {
        committed.push(manifest);
        if (opts.commits === false) await new Promise(() => {});
      },
      onTerminal: async () => {},
      onSlotsFreed: () => job.schedule(),
    });
    const leader: Leader = { epoch, job, events, gateway, registry, recoveries, committed };
    this.leaders.push(leader);
    opts.beforeStart?.(job);
    await job.start(epoch > 1);
    return leader;
  }

  /** The leader dies: what it wrote is flushed (as its background writer would have), nothing else happens. */
  async kill(leader: Leader): Promise<void> {
    await leader.events.flush();
    await leader.job.suspend();
    leader.registry.close();
  }

  async close(): Promise<void> {
    for (const l of this.leaders.splice(0)) {
      await l.job.suspend().catch(() => undefined);
      l.registry.close();
    }
  }
}

/** Tells `job` that the attempt `d` deployed finished on its TaskManager. */
export function finish(job: JobMaster, d: Deployment, subpartitionBytes: number[] = []): void {
  job.onTaskExecutionState({
    execution: d.tdd.execution,
    state: 'FINISHED',
    task_manager_id: d.taskManagerId,
    epoch: d.tdd.epoch,
    io_metrics: {
      records_in: 1,
      records_out: 1,
      bytes_in: 0,
      bytes_out: subpartitionBytes.reduce((a, b) => a + b, 0),
      subpartition_bytes: subpartitionBytes,
    },
    error_code: '',
    error_message: '',
    missing_partition: null,
  });
}

/** The partition a finished deployment left on its TaskManager, as GetAndRetainPartitionsWithMetrics reports it. */
export function retainedPartitionOf(d: Deployment, totalBytes = 8): PartitionWithMetrics__Output {
  const e = d.tdd.execution!;
  return {
    partition_id: {
      job_id: e.job_id,
      vertex_id: e.vertex_id,
      subtask: e.subtask,
      attempt: e.attempt,
      epoch: d.tdd.epoch,
    },
    num_subpartitions: d.tdd.output?.num_subpartitions ?? 0,
    total_bytes: totalBytes,
    packed_subpartition_bytes: Buffer.alloc(0),
  };
}
