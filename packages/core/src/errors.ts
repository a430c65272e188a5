import { createRequire } from 'node:module';
import type * as grpc from '@grpc/grpc-js';

/**
 * The gRPC status codes used here: fixed numbers of the gRPC protocol, spelled out so that loading
 * the error types does not load grpc-js (about a third of `rebound --help`'s start-up). grpc-js
 * itself is loaded on the first toServiceError, by a process that serves gRPC anyway.
 */
const GrpcStatus = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  ALREADY_EXISTS: 6,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
// Checked against grpc-js's own enum, name by name, when this compiles.
GrpcStatus satisfies { readonly [K in keyof typeof GrpcStatus]: (typeof grpc.status)[K] };

const requireHere = createRequire(import.meta.url);
let grpcJs: typeof grpc | undefined;
const loadGrpc = (): typeof grpc => (grpcJs ??= requireHere('@grpc/grpc-js') as typeof grpc);

/**
 * Stable error codes. They travel over gRPC in the `rebound-error-code` metadata entry, so a
 * caller can tell a stale epoch from a missing partition without parsing messages.
 */
export const ErrorCode = {
  CONFIG_INVALID: 'CONFIG_INVALID',
  NOT_LEADER: 'NOT_LEADER',
  STALE_EPOCH: 'STALE_EPOCH',
  EPOCH_UNCONFIRMED: 'EPOCH_UNCONFIRMED',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  JOB_NOT_FOUND: 'JOB_NOT_FOUND',
  JOB_INVALID: 'JOB_INVALID',
  JOB_MODULE_INVALID: 'JOB_MODULE_INVALID',
  PARTITION_NOT_FOUND: 'PARTITION_NOT_FOUND',
  /** Something that may be created once already is (a result partition on a shuffle worker). */
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  TASK_MANAGER_UNKNOWN: 'TASK_MANAGER_UNKNOWN',
  TASK_CANCELED: 'TASK_CANCELED',
  USER_CODE: 'USER_CODE',
  HA_DIR_INVALID: 'HA_DIR_INVALID',
  HA_RECORD_REFUSED: 'HA_RECORD_REFUSED',
  LEADER_NOT_FOUND: 'LEADER_NOT_FOUND',
  ADDRESS_IN_USE: 'ADDRESS_IN_USE',
  SLOT_UNAVAILABLE: 'SLOT_UNAVAILABLE',
  EVENT_STORE_CORRUPT: 'EVENT_STORE_CORRUPT',
  EVENT_STORE_FAILED: 'EVENT_STORE_FAILED',
  ILLEGAL_STATE: 'ILLEGAL_STATE',
  /** A request argument out of range (e.g. a FetchJobResult position). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const GRPC_STATUS_OF: Record<ErrorCode, grpc.status> = {
  CONFIG_INVALID: GrpcStatus.INVALID_ARGUMENT,
  NOT_LEADER: GrpcStatus.UNAVAILABLE,
  STALE_EPOCH: GrpcStatus.FAILED_PRECONDITION,
  EPOCH_UNCONFIRMED: GrpcStatus.FAILED_PRECONDITION,
  UNAUTHENTICATED: GrpcStatus.UNAUTHENTICATED,
  PERMISSION_DENIED: GrpcStatus.PERMISSION_DENIED,
  JOB_NOT_FOUND: GrpcStatus.NOT_FOUND,
  JOB_INVALID: GrpcStatus.INVALID_ARGUMENT,
  JOB_MODULE_INVALID: GrpcStatus.INVALID_ARGUMENT,
  PARTITION_NOT_FOUND: GrpcStatus.NOT_FOUND,
  ALREADY_EXISTS: GrpcStatus.ALREADY_EXISTS,
  TASK_MANAGER_UNKNOWN: GrpcStatus.FAILED_PRECONDITION,
  TASK_CANCELED: GrpcStatus.CANCELLED,
  USER_CODE: GrpcStatus.ABORTED,
  HA_DIR_INVALID: GrpcStatus.FAILED_PRECONDITION,
  HA_RECORD_REFUSED: GrpcStatus.FAILED_PRECONDITION,
  LEADER_NOT_FOUND: GrpcStatus.UNAVAILABLE,
  ADDRESS_IN_USE: GrpcStatus.UNAVAILABLE,
  SLOT_UNAVAILABLE: GrpcStatus.RESOURCE_EXHAUSTED,
  EVENT_STORE_CORRUPT: GrpcStatus.DATA_LOSS,
  EVENT_STORE_FAILED: GrpcStatus.INTERNAL,
  ILLEGAL_STATE: GrpcStatus.FAILED_PRECONDITION,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  INTERNAL: GrpcStatus.INTERNAL,
  INVALID_ARGUMENT: GrpcStatus.INVALID_ARGUMENT,
};

export class ReboundError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A configuration value, option or argument that is malformed or out of range. */
export class ConfigError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.CONFIG_INVALID, message, options);
  }
}

export class NotLeaderError extends ReboundError {
  constructor(message = 'this JobMaster is not the leader', options?: ErrorOptions) {
    super(ErrorCode.NOT_LEADER, message, options);
  }
}

/**
 * Whether `err` says this JobMaster's leadership ended (also when it came over gRPC, and so is a
 * plain ReboundError with the code): not a failure of the job, whose next leader takes it over.
 */
export function isNotLeader(err: unknown): boolean {
  return err instanceof ReboundError && err.code === ErrorCode.NOT_LEADER;
}

/** A request of a leader epoch older than the one the receiver knows. */
export class StaleEpochError extends ReboundError {
  constructor(
    readonly epoch: number,
    readonly currentEpoch: number,
    message = `request from leader epoch ${epoch} rejected: epoch ${currentEpoch} is newer`,
  ) {
    super(ErrorCode.STALE_EPOCH, message);
  }
}

/**
 * An authenticated caller (it holds the cluster secret) asked for something only another party may
 * do: report or steer an execution deployed to another TaskManager, take over a live
 * TaskManager's id, or read partitions without the job's read capability.
 */
export class PermissionDeniedError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.PERMISSION_DENIED, message);
  }
}

/** `jobId` is the id (or the prefix, or the name) that was asked for. */
export class JobNotFoundError extends ReboundError {
  constructor(
    readonly jobId: string,
    message = `no job with id ${jobId}; run 'rebound list' to see the jobs`,
  ) {
    super(ErrorCode.JOB_NOT_FOUND, message);
  }
}

export class PartitionNotFoundError extends ReboundError {
  constructor(
    readonly partitionId: string,
    detail = '',
  ) {
    super(ErrorCode.PARTITION_NOT_FOUND, `partition ${partitionId} not found${detail ? `: ${detail}` : ''}`);
  }
}

/** Something that is created once (a result partition of one attempt) already exists. */
export class AlreadyExistsError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.ALREADY_EXISTS, message, options);
  }
}

/** An operation was asked of something in a state that does not allow it. */
export class IllegalStateError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.ILLEGAL_STATE, message, options);
  }
}

/** A job graph (or a job id) that cannot be run or stored as given. */
export class JobInvalidError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.JOB_INVALID, message, options);
  }
}

/** A job module that cannot be found or loaded, or whose default export is not a job. */
export class JobModuleInvalidError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.JOB_MODULE_INVALID, message, options);
  }
}

/**
 * The HA store (the HA directory, or etcd) holds something Rebound did not write or cannot read:
 * a missing directory, a torn or foreign record.
 */
export class HaDirInvalidError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.HA_DIR_INVALID, message, options);
  }
}

/** No JobMaster leader is recorded, or none was elected in time. */
export class LeaderNotFoundError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.LEADER_NOT_FOUND, message, options);
  }
}

/** The call carries no cluster secret, or a wrong one. */
export class UnauthenticatedError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.UNAUTHENTICATED, message, options);
  }
}

/** A server could not bind its port because another process holds it. */
export class AddressInUseError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.ADDRESS_IN_USE, message, options);
  }
}

/** A peer did not answer, or not in time; trying again later may succeed. */
export class UnavailableError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.UNAVAILABLE, message, options);
  }
}

/** A request argument out of range or missing (e.g. a FetchJobResult position). */
export class InvalidArgumentError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.INVALID_ARGUMENT, message, options);
  }
}

/**
 * User code (a source, an operator, a coordinator of the job module) failed or broke its
 * contract; the job fails, the cluster does not.
 */
export class UserCodeError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.USER_CODE, message, options);
  }
}

/** A task (or a read on its behalf) ended because it was canceled. */
export class TaskCanceledError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.TASK_CANCELED, message, options);
  }
}

/** A TaskManager has no free slot for a deployment. */
export class SlotUnavailableError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.SLOT_UNAVAILABLE, message, options);
  }
}

/** A failure that should not happen: a bug, or an environment Rebound does not expect. */
export class InternalError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.INTERNAL, message, options);
  }
}

/**
 * The same failure told with more context: the code (so callers' checks and the gRPC status) and
 * the cause stay; an error that is not a ReboundError becomes INTERNAL.
 */
export function withContext(err: unknown, message: string): ReboundError {
  const code = err instanceof ReboundError ? err.code : ErrorCode.INTERNAL;
  return new ReboundError(code, message, { cause: err });
}

const CODE_KEY = 'rebound-error-code';

/** Turns any error into a gRPC ServiceError that carries its stable code. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const code: ErrorCode = err instanceof ReboundError ? err.code : ErrorCode.INTERNAL;
  const metadata = new (loadGrpc().Metadata)();
  metadata.set(CODE_KEY, code);
  const message = err instanceof Error ? err.message : String(err);
  return { code: GRPC_STATUS_OF[code], details: message, metadata };
}

/** The ReboundError a failed gRPC call stands for (UNAVAILABLE for transport failures). */
export function fromServiceError(err: unknown): ReboundError {
  if (err instanceof ReboundError) return err;
  const se = err as Partial<grpc.ServiceError>;
  const raw = se?.metadata?.get(CODE_KEY)?.[0];
  const details = se?.details ?? (err instanceof Error ? err.message : String(err));
  if (typeof raw === 'string' && raw in ErrorCode) {
    return new ReboundError(raw as ErrorCode, details, { cause: err });
  }
  if (se?.code === GrpcStatus.UNAVAILABLE || se?.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new ReboundError(ErrorCode.UNAVAILABLE, details, { cause: err });
  }
  return new ReboundError(ErrorCode.INTERNAL, details, { cause: err });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
