import { readFile } from 'node:fs/promises';
import { JobNotFoundError, errorMessage } from '@rebound/core';
import type {
  FetchJobResultRequest__Output,
  JobResultChunk,
  Clock,
  Configuration,
  CoordinationRequest__Output,
  CoordinationResponse,
  FetchJobArtifactRequest__Output,
  JobGraph__Output,
  JobStatus,
  JobSummary,
  Logger,
  SplitRequest__Output,
  SplitResponse,
  SubmitJobRequest__Output,
  TaskExecutionState__Output,
} from '@rebound/core';
import type { HighAvailabilityServices, JobGraphStore } from '@rebound/ha';
import { CrashPoints } from './crash-points.js';
import { Dispatcher } from './dispatcher/dispatcher.js';
import type { ExceptionHistorySnapshot } from './exception-history.js';
import { authorizeExecutionCall } from './execution-authorization.js';
import type { JobMaster } from './job-master.js';
import type { UserCodeWorkers } from './user-code/user-code-workers.js';
import { JobRecords } from './job-records.js';
import { JobRunner } from './job-runner.js';
import type { LeaderView, ShuffleWorkerInfo } from './rest/leader-view.js';
import { taskManagerDirectoryOf } from './recovery/task-manager-directory.js';
import { RemoteShuffleMaster } from './shuffle/remote-shuffle-master.js';
import { ShuffleWorkerRegistry } from './shuffle/shuffle-worker-registry.js';
import { RpcTaskExecutorGateway } from './task-executor-gateway.js';
import { TaskManagerRegistry } from './task-manager-registry.js';

/** What a leadership is made of: the election's grant, and the process around it. */
export interface LeaderServicesOptions {
  readonly epoch: number;
  readonly jobmasterId: string;
  /** Address TaskManagers and clients reach this process at. */
  readonly address: string;
  readonly ha: HighAvailabilityServices;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Loads each job module in a worker first (owned by the process: bundled once, not per leadership). */
  readonly userCodeWorkers: UserCodeWorkers;
  /** When the previous leader last renewed its lease (if this leadership took over an expired one). */
  readonly previousLeaderLastHeardMs?: number;
  /** Aborted the moment the election ends this leadership, before close() runs. */
  readonly leadershipEnded?: AbortSignal;
}

/**
 * Everything that exists only while this process leads: the TaskManager registry, the JobRunner
 * with a JobMaster per running job, and the Dispatcher. Created on grantLeadership, closed on
 * revokeLeadership. TaskManager calls are authorised here and routed to the job's JobMaster.
 */
export class LeaderServices implements LeaderView {
  readonly epoch: number;
  readonly registry: TaskManagerRegistry;
  /** The shuffle workers registered with this leader (remote shuffle). */
  readonly shuffleWorkers: ShuffleWorkerRegistry;
  readonly dispatcher: Dispatcher;
  private readonly runner: JobRunner;
  private readonly store: JobGraphStore;
  private readonly logger: Logger;
  private readonly electedAtMs: number;
  /** Aborted on close: ends the waits of this leadership for its HA store. */
  private readonly leadership = new AbortController();
  /** Jobs each TaskManager said it retains partitions of when it last registered (REST /cluster). */
  readonly retainedJobsAtRegistration = new Map<string, readonly string[]>();
  private readonly remoteShuffle: boolean;

  constructor(opts: LeaderServicesOptions) {
    const { epoch, config, clock, logger } = opts;
    this.epoch = epoch;
    this.logger = logger;
    this.electedAtMs = clock.now();
    // Every write of this leadership is fenced by its epoch (etcd: a guarded transaction), and a
    // store that does not answer is waited for until the leadership ends.
    this.store = opts.ha.leaderJobGraphStore(epoch, {
      until: opts.leadershipEnded
        ? AbortSignal.any([this.leadership.signal, opts.leadershipEnded])
        : this.leadership.signal,
      onRetry: (what, err, attempt) =>
        logger.warn({ what, attempt, err: errorMessage(err) }, 'the HA store did not answer; retrying'),
    });
    const records = new JobRecords(this.store);
    this.registry = new TaskManagerRegistry(
      epoch,
      opts.jobmasterId,
      config,
      {
        onTaskManagerRegistered: (tm, retained) => {
          this.retainedJobsAtRegistration.set(tm.id, [...retained]);
          this.runner.onTaskManagerRegistered(tm, retained);
        },
        onTaskManagerLost: (tmId, reason, keptPartitionsOf) => {
          this.retainedJobsAtRegistration.delete(tmId);
          this.runner.onTaskManagerLost(tmId, reason, keptPartitionsOf);
        },
      },
      logger.child({ component: 'TaskManagerRegistry' }),
      clock,
    );
    let remoteShuffle: RemoteShuffleMaster | undefined;
    const remote = config.getString('shuffle.type') === 'remote';
    this.remoteShuffle = remote;
    this.shuffleWorkers = new ShuffleWorkerRegistry({
      epoch,
      jobmasterId: opts.jobmasterId,
      config,
      listener: {
        onShuffleWorkerRegistered: (worker) => {
          remoteShuffle?.onShuffleWorkerRegistered(worker);
          this.runner.onShuffleWorkerRegistered();
        },
        onShuffleWorkerLost: (workerId, reason) => remoteShuffle?.onShuffleWorkerLost(workerId, reason),
      },
      liveJobs: () => this.runner.jobIds(),
      logger: logger.child({ component: 'ShuffleWorkerRegistry' }),
      clock,
    });
    if (remote) {
      remoteShuffle = new RemoteShuffleMaster({
        epoch,
        workers: this.shuffleWorkers,
        logger: logger.child({ component: 'RemoteShuffleMaster' }),
      });
    }
    this.runner = new JobRunner({
      epoch,
      jobmasterId: opts.jobmasterId,
      address: opts.address,
      ha: opts.ha,
      store: this.store,
      records,
      registry: this.registry,
      // Every call of this leadership to a TaskManager, shared by its JobMasters.
      gateway: new RpcTaskExecutorGateway(this.registry),
      config,
      logger,
      clock,
      userCodeWorkers: opts.userCodeWorkers,
      crashPoints: CrashPoints.from(config, logger),
      electedAtMs: this.electedAtMs,
      previousLeaderLastHeardMs: opts.previousLeaderLastHeardMs,
      taskManagerDirectory: taskManagerDirectoryOf(opts.ha.endpoints()),
      ...(remoteShuffle ? { shuffleMaster: remoteShuffle } : {}),
    });
    this.dispatcher = new Dispatcher({
      epoch,
      store: this.store,
      records,
      runner: this.runner,
      config,
      logger,
      clock,
      storageDir: opts.ha.storageDir,
    });
  }

  async start(): Promise<void> {
    this.registry.start();
    this.shuffleWorkers.start();
    await this.runner.recoverJobs();
    this.dispatcher.start();
  }

  // The Dispatcher's part, for clients and the REST API.

  submit(req: SubmitJobRequest__Output): Promise<string> {
    return this.dispatcher.submit(req);
  }

  resultChunks(req: FetchJobResultRequest__Output): Promise<AsyncGenerator<JobResultChunk>> {
    return this.dispatcher.resultChunks(req);
  }

  status(jobId: string): Promise<JobStatus> {
    return this.dispatcher.status(jobId);
  }

  list(): Promise<JobSummary[]> {
    return this.dispatcher.list();
  }

  cancel(jobId: string): Promise<string> {
    return this.dispatcher.cancel(jobId);
  }

  exceptionHistory(jobId: string): Promise<ExceptionHistorySnapshot> {
    return this.dispatcher.exceptionHistory(jobId);
  }

  // TaskManager calls: each authorised, then routed to the job's JobMaster.

  private job(jobId: string): JobMaster {
    const job = this.runner.get(jobId);
    if (!job) throw new JobNotFoundError(jobId);
    return job;
  }

  /** A TaskManager's UpdateTaskExecutionState: only from the TaskManager that holds the execution. */
  onTaskExecutionState(update: TaskExecutionState__Output): void {
    const job = this.runner.get(update.execution?.job_id ?? '');
    // A kept task may report before reconciliation adopted it (the TaskManager retries).
    if (job?.state === 'RECONCILING') {
      this.registry.authenticate(update.task_manager_id, update.session_id, 'UpdateTaskExecutionState');
      job.onTaskExecutionState(update);
    }
    authorizeExecutionCall(this.registry, job, update, 'UpdateTaskExecutionState', this.logger);
    job?.onTaskExecutionState(update);
  }

  /** A source reader's RequestSplit: only from the TaskManager that runs the reader. */
  requestSplit(req: SplitRequest__Output): Promise<SplitResponse> {
    const job = this.job(req.execution?.job_id ?? '');
    // A kept reader may ask before reconciliation adopted it: it is told to ask again.
    if (job.state === 'RECONCILING') {
      this.registry.authenticate(req.task_manager_id, req.session_id, 'RequestSplit');
      return job.requestSplit(req);
    }
    authorizeExecutionCall(this.registry, job, req, 'RequestSplit', this.logger);
    return job.requestSplit(req);
  }

  /** A task's request to a user coordinator: only from the TaskManager that runs the task. */
  handleCoordinationRequest(req: CoordinationRequest__Output): Promise<CoordinationResponse> {
    const job = this.job(req.execution?.job_id ?? '');
    if (job.state === 'RECONCILING') {
      this.registry.authenticate(req.task_manager_id, req.session_id, 'SendCoordinationRequest');
      return job.handleCoordinationRequest(req);
    }
    authorizeExecutionCall(this.registry, job, req, 'SendCoordinationRequest', this.logger);
    return job.handleCoordinationRequest(req);
  }

  /** A job's module bundle, for a registered TaskManager (with its session) only. */
  async fetchArtifact(req: FetchJobArtifactRequest__Output): Promise<{ bytes: Buffer; digest: string }> {
    this.registry.authenticate(req.task_manager_id, req.session_id, 'FetchJobArtifact');
    const { graph, modulePath } = await this.store.getJob(req.job_id);
    return { bytes: await readFile(modulePath), digest: graph.module_digest };
  }

  // What the REST API reads of this leadership besides the Dispatcher.

  graphOf(jobId: string): JobGraph__Output | undefined {
    return this.runner.get(jobId)?.jobGraph;
  }

  /** When this leadership began. */
  get electedAt(): number {
    return this.electedAtMs;
  }

  /** Ids of the jobs this leader runs now. */
  liveJobIds(): string[] {
    return this.runner.jobIds();
  }

  shuffleWorkerOverview(): ShuffleWorkerInfo[] {
    return this.shuffleWorkers.all().map((w) => ({
      id: w.id,
      address: w.address,
      partitions: w.partitions,
      bytes: w.bytes,
      lastHeartbeatMs: w.lastHeartbeatMs,
    }));
  }

  /** Finished result partitions (of producers) this leader tracks, per TaskManager. */
  trackedPartitions(): Map<string, { partitions: number; bytes: number }> {
    const out = new Map<string, { partitions: number; bytes: number }>();
    // Under the remote shuffle no TaskManager keeps a partition: the workers say what they hold.
    if (this.remoteShuffle) return out;
    for (const job of this.runner.all()) {
      for (const ev of job.graph.allExecutionVertices()) {
        const tmId = ev.location?.task_manager_id;
        if (ev.state !== 'FINISHED' || !tmId || ev.jobVertex.consumers.length === 0) continue;
        const e = out.get(tmId) ?? { partitions: 0, bytes: 0 };
        e.partitions++;
        e.bytes += Number(ev.ioMetrics?.bytes_out ?? 0);
        out.set(tmId, e);
      }
    }
    return out;
  }

  /** Leadership lost: stop everything without touching TaskManagers or stored jobs. */
  async close(): Promise<void> {
    this.leadership.abort();
    this.dispatcher.close();
    await this.runner.close();
    this.registry.close();
    this.shuffleWorkers.close();
  }
}
