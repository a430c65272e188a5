import {
  ClusterSecurity,
  ErrorCode,
  fromServiceError,
  loadProto,
  type ExecutionAttemptId,
  type ResultPartitionId,
} from '@rebound/core';
import { ChaosError } from './errors.js';

/**
 * The forged calls of the `forged-rpc` fault: what someone who reaches the cluster's ports sends,
 * without the cluster secret, with a wrong one, or with the secret but a leader epoch no leader
 * holds. Each entry is one call with the refusal it must meet; a call that is answered, or refused
 * otherwise, is a finding. New checks (e.g. per-TaskManager sessions) are one more entry each.
 */

/** A leader epoch far above any real one: before the fence asked the leader record, one call with it fenced the real leader out. */
export const FORGED_EPOCH = 9e15;

/** A session secret (and read capability) of the right shape that no TaskManager or job has. */
export const FORGED_SESSION = 'AAAAAAAAAAAAAAAAAAAAAA';

/** What the forged calls aim at: the real job, its leader and one of its TaskManagers. */
export interface ForgeryContext {
  readonly jobId: string;
  readonly leaderAddress: string;
  readonly leaderEpoch: number;
  readonly taskManagerId: string;
  readonly taskManagerAddress: string;
  /** An execution of the job running on that TaskManager (a made-up one if none was found). */
  readonly running: ExecutionAttemptId;
  /** Whether `running` is real: a call at a made-up execution reaches no task and proves nothing. */
  readonly runningFound: boolean;
  /** A finished partition of the job on that TaskManager (a made-up one if none was found). */
  readonly partition: ResultPartitionId;
  /** Whether `partition` is real: a made-up one on a TaskManager that never ran the job has no read capability to check. */
  readonly partitionFound: boolean;
}

export type ForgedService = 'Dispatcher' | 'JobMasterGateway' | 'TaskExecutorGateway' | 'PartitionService';

/** Whose credentials the call carries: none, a secret of the right length that is not the cluster's, or the cluster's own. */
export type ForgedCredentials = 'none' | 'wrong' | 'cluster';

export interface ForgedCall {
  readonly name: string;
  readonly to: 'leader' | 'taskmanager';
  readonly service: ForgedService;
  readonly method: string;
  readonly credentials: ForgedCredentials;
  readonly request: (c: ForgeryContext) => object;
  /** The ErrorCode it must be refused with, before it changes anything. */
  readonly refusedWith: ErrorCode;
  /** Sent only when the context has a real finished partition (the check it probes needs one). */
  readonly needsPartition?: boolean;
  /** What in the context it aims at: a call at a made-up one does not count as injected (forgeryInjected). */
  readonly target?: 'running' | 'partition';
}

const running = (c: ForgeryContext): ExecutionAttemptId => c.running;

export const FORGED_CALLS: readonly ForgedCall[] = [
  // No secret, or a wrong one: refused by the server interceptor before any handler runs.
  {
    name: 'SubmitJob of a module that exits, without the secret',
    to: 'leader',
    service: 'Dispatcher',
    method: 'SubmitJob',
    credentials: 'none',
    request: () => ({
      job_graph: { job_id: 'forged-job', name: 'forged' },
      module_bundle: Buffer.from('process.exit(1);\n'),
    }),
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'CancelJob of the running job, with a wrong secret',
    to: 'leader',
    service: 'Dispatcher',
    method: 'CancelJob',
    credentials: 'wrong',
    request: (c) => ({ job_id: c.jobId }),
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'UpdateTaskExecutionState FINISHED of a running task, without the secret',
    to: 'leader',
    service: 'JobMasterGateway',
    method: 'UpdateTaskExecutionState',
    credentials: 'none',
    request: (c) => ({
      execution: running(c),
      state: 'FINISHED',
      task_manager_id: c.taskManagerId,
      epoch: c.leaderEpoch,
    }),
    target: 'running',
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'RequestSplit for a running task, without the secret',
    to: 'leader',
    service: 'JobMasterGateway',
    method: 'RequestSplit',
    credentials: 'none',
    request: (c) => ({ execution: running(c), epoch: c.leaderEpoch, operator_id: '' }),
    target: 'running',
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'RegisterTaskManager under a live TaskManager id, with a wrong secret',
    to: 'leader',
    service: 'JobMasterGateway',
    method: 'RegisterTaskManager',
    credentials: 'wrong',
    request: (c) => ({ task_manager_id: c.taskManagerId, address: '127.0.0.1:9', slots: 2 }),
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'CancelTask of a running task, without the secret',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'CancelTask',
    credentials: 'none',
    request: (c) => ({ epoch: c.leaderEpoch, execution: running(c) }),
    target: 'running',
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  {
    name: 'ReadSubpartitions of a finished partition, without the secret',
    to: 'taskmanager',
    service: 'PartitionService',
    method: 'ReadSubpartitions',
    credentials: 'none',
    request: (c) => ({ partition_id: c.partition, subpartition_start: 0, subpartition_end: 0 }),
    target: 'partition',
    refusedWith: ErrorCode.UNAUTHENTICATED,
  },
  // The secret, but a leader epoch no leader record names: refused by the TaskManager's fence,
  // which must not raise its epoch on the request's word.
  {
    name: 'CancelTask with a forged epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'CancelTask',
    credentials: 'cluster',
    request: (c) => ({ epoch: FORGED_EPOCH, execution: running(c) }),
    target: 'running',
    refusedWith: ErrorCode.EPOCH_UNCONFIRMED,
  },
  {
    name: 'ReleasePartitions of a finished partition with a forged epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'ReleasePartitions',
    credentials: 'cluster',
    request: (c) => ({ epoch: FORGED_EPOCH, partitions: [c.partition] }),
    target: 'partition',
    refusedWith: ErrorCode.EPOCH_UNCONFIRMED,
  },
  {
    name: 'DisconnectJob (releasing partitions) with a forged epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'DisconnectJob',
    credentials: 'cluster',
    request: (c) => ({ epoch: FORGED_EPOCH, job_id: c.jobId, release_partitions: true }),
    refusedWith: ErrorCode.EPOCH_UNCONFIRMED,
  },
  {
    name: 'GetAndRetainPartitionsWithMetrics with a forged epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'GetAndRetainPartitionsWithMetrics',
    credentials: 'cluster',
    request: (c) => ({ epoch: FORGED_EPOCH, job_id: c.jobId }),
    refusedWith: ErrorCode.EPOCH_UNCONFIRMED,
  },
  {
    name: 'DeployTask with a forged epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'DeployTask',
    credentials: 'cluster',
    request: (c) => ({ epoch: FORGED_EPOCH, execution: { ...running(c), attempt: 999 }, vertex_name: 'forged' }),
    target: 'running',
    refusedWith: ErrorCode.EPOCH_UNCONFIRMED,
  },
  // The secret and the leader's current epoch, but not the party the call claims to be: refused
  // by the per-TaskManager session (both directions) and the job's partition read capability.
  {
    name: "UpdateTaskExecutionState FINISHED of a running task, with the secret but not its TaskManager's session",
    to: 'leader',
    service: 'JobMasterGateway',
    method: 'UpdateTaskExecutionState',
    credentials: 'cluster',
    request: (c) => ({
      execution: running(c),
      state: 'FINISHED',
      task_manager_id: c.taskManagerId,
      epoch: c.leaderEpoch,
      session_id: FORGED_SESSION,
    }),
    target: 'running',
    refusedWith: ErrorCode.PERMISSION_DENIED,
  },
  {
    name: "RequestSplit for a running task, with the secret but not its TaskManager's session",
    to: 'leader',
    service: 'JobMasterGateway',
    method: 'RequestSplit',
    credentials: 'cluster',
    request: (c) => ({
      execution: running(c),
      epoch: c.leaderEpoch,
      operator_id: '',
      task_manager_id: c.taskManagerId,
      session_id: FORGED_SESSION,
    }),
    target: 'running',
    refusedWith: ErrorCode.PERMISSION_DENIED,
  },
  {
    name: "CancelTask of a running task with the current epoch but not the TaskManager's session",
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'CancelTask',
    credentials: 'cluster',
    request: (c) => ({ epoch: c.leaderEpoch, execution: running(c), session_id: FORGED_SESSION }),
    target: 'running',
    refusedWith: ErrorCode.PERMISSION_DENIED,
  },
  {
    name: "ReleasePartitions of a finished partition with the current epoch but not the TaskManager's session",
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'ReleasePartitions',
    credentials: 'cluster',
    request: (c) => ({ epoch: c.leaderEpoch, partitions: [c.partition], session_id: FORGED_SESSION }),
    target: 'partition',
    refusedWith: ErrorCode.PERMISSION_DENIED,
  },
  {
    name: "ReadSubpartitions of a finished partition, with the secret but without the job's read capability",
    to: 'taskmanager',
    service: 'PartitionService',
    method: 'ReadSubpartitions',
    credentials: 'cluster',
    request: (c) => ({
      partition_id: c.partition,
      subpartition_start: 0,
      subpartition_end: 0,
      read_capability: FORGED_SESSION,
    }),
    target: 'partition',
    refusedWith: ErrorCode.PERMISSION_DENIED,
    needsPartition: true,
  },
  // The secret and an epoch older than the leader's: a deposed leader, refused as stale.
  {
    name: 'CancelTask of a running task with an older epoch',
    to: 'taskmanager',
    service: 'TaskExecutorGateway',
    method: 'CancelTask',
    credentials: 'cluster',
    request: (c) => ({ epoch: Math.max(0, c.leaderEpoch - 1), execution: running(c) }),
    target: 'running',
    refusedWith: ErrorCode.STALE_EPOCH,
  },
];

export type ForgedCallOutcome =
  | { readonly outcome: 'refused'; readonly code: ErrorCode; readonly message: string }
  /** The server answered: the forgery was accepted. */
  | { readonly outcome: 'accepted' }
  /** The target did not answer (killed by another fault, or gone): proves nothing either way. */
  | { readonly outcome: 'unreachable'; readonly message: string };

interface MethodDef {
  readonly path: string;
  readonly responseStream: boolean;
  readonly requestSerialize: (value: object) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => unknown;
}

const CALL_TIMEOUT_MS = 10_000;

function outcomeOf(err: unknown): ForgedCallOutcome {
  const e = fromServiceError(err);
  if (e.code === ErrorCode.UNAVAILABLE) return { outcome: 'unreachable', message: e.message };
  return { outcome: 'refused', code: e.code, message: e.message };
}

/** Sends one forged call with `security`'s credentials; never throws. */
export async function sendForgedCall(
  call: ForgedCall,
  c: ForgeryContext,
  security: ClusterSecurity,
): Promise<ForgedCallOutcome> {
  const proto = loadProto();
  const ctor = proto[call.service];
  const method = (ctor.service as unknown as Record<string, MethodDef>)[call.method];
  if (!method) throw new ChaosError(`${call.service} has no method ${call.method}`);
  const address = call.to === 'leader' ? c.leaderAddress : c.taskManagerAddress;
  const client = new ctor(address, security.channelCredentials(), security.channelOptions());
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  try {
    return await new Promise<ForgedCallOutcome>((resolve) => {
      const request = call.request(c);
      if (method.responseStream) {
        const stream = client.makeServerStreamRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          { deadline },
        );
        let settled = false;
        const settle = (o: ForgedCallOutcome): void => {
          if (settled) return;
          settled = true;
          if (o.outcome === 'accepted') stream.cancel();
          resolve(o);
        };
        stream.on('data', () => settle({ outcome: 'accepted' }));
        stream.on('error', (err: unknown) => settle(outcomeOf(err)));
        stream.on('end', () => settle({ outcome: 'accepted' }));
      } else {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          { deadline },
          (err) => resolve(err ? outcomeOf(err) : { outcome: 'accepted' }),
        );
      }
    });
  } finally {
    client.close();
  }
}

/**
 * Whether a burst of forged calls was injected: the fault's point is calls about the job's own
 * running task, so at least one call must have reached a real running execution. Calls at the
 * made-up execution or partition a context falls back to reach nothing the job has; untargeted
 * calls alone do not make the fault injected either.
 */
export function forgeryInjected(
  sent: readonly { readonly call: ForgedCall; readonly outcome: ForgedCallOutcome }[],
  c: ForgeryContext,
): boolean {
  return (
    c.runningFound && sent.some(({ call, outcome }) => call.target === 'running' && outcome.outcome !== 'unreachable')
  );
}

/** The refusal a forged call met, judged: undefined when it was refused as it must be. */
export function forgeryProblem(call: ForgedCall, o: ForgedCallOutcome): string | undefined {
  if (o.outcome === 'accepted') return `${call.name}: accepted (must be refused with ${call.refusedWith})`;
  if (o.outcome === 'refused' && o.code !== call.refusedWith)
    return `${call.name}: refused with ${o.code} (${o.message.split('\n')[0]}), not ${call.refusedWith}`;
  return undefined;
}
