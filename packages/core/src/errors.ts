import * as grpc from '@grpc/grpc-js';

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
  TASK_MANAGER_UNKNOWN: 'TASK_MANAGER_UNKNOWN',
  TASK_CANCELED: 'TASK_CANCELED',
  USER_CODE: 'USER_CODE',
  HA_DIR_INVALID: 'HA_DIR_INVALID',
  LEADER_NOT_FOUND: 'LEADER_NOT_FOUND',
  ADDRESS_IN_USE: 'ADDRESS_IN_USE',
  SLOT_UNAVAILABLE: 'SLOT_UNAVAILABLE',
  EVENT_STORE_CORRUPT: 'EVENT_STORE_CORRUPT',
  EVENT_STORE_FAILED: 'EVENT_STORE_FAILED',
  ILLEGAL_STATE: 'ILLEGAL_STATE',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const GRPC_STATUS_OF: Record<ErrorCode, grpc.status> = {
  CONFIG_INVALID: grpc.status.INVALID_ARGUMENT,
  NOT_LEADER: grpc.status.UNAVAILABLE,
  STALE_EPOCH: grpc.status.FAILED_PRECONDITION,
  EPOCH_UNCONFIRMED: grpc.status.FAILED_PRECONDITION,
  UNAUTHENTICATED: grpc.status.UNAUTHENTICATED,
  PERMISSION_DENIED: grpc.status.PERMISSION_DENIED,
  JOB_NOT_FOUND: grpc.status.NOT_FOUND,
  JOB_INVALID: grpc.status.INVALID_ARGUMENT,
  JOB_MODULE_INVALID: grpc.status.INVALID_ARGUMENT,
  PARTITION_NOT_FOUND: grpc.status.NOT_FOUND,
  TASK_MANAGER_UNKNOWN: grpc.status.FAILED_PRECONDITION,
  TASK_CANCELED: grpc.status.CANCELLED,
  USER_CODE: grpc.status.ABORTED,
  HA_DIR_INVALID: grpc.status.FAILED_PRECONDITION,
  LEADER_NOT_FOUND: grpc.status.UNAVAILABLE,
  ADDRESS_IN_USE: grpc.status.UNAVAILABLE,
  SLOT_UNAVAILABLE: grpc.status.RESOURCE_EXHAUSTED,
  EVENT_STORE_CORRUPT: grpc.status.DATA_LOSS,
  EVENT_STORE_FAILED: grpc.status.INTERNAL,
  ILLEGAL_STATE: grpc.status.FAILED_PRECONDITION,
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  INTERNAL: grpc.status.INTERNAL,
};

export class ReboundError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

export class ConfigError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.CONFIG_INVALID, message);
  }
}

export class NotLeaderError extends ReboundError {
  constructor(message = 'this JobMaster is not the leader') {
    super(ErrorCode.NOT_LEADER, message);
  }
}

export class StaleEpochError extends ReboundError {
  constructor(
    readonly epoch: number,
    readonly currentEpoch: number,
  ) {
    super(ErrorCode.STALE_EPOCH, `request from leader epoch ${epoch} rejected: epoch ${currentEpoch} is newer`);
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

export class JobNotFoundError extends ReboundError {
  constructor(readonly jobId: string) {
    super(ErrorCode.JOB_NOT_FOUND, `no job with id ${jobId}; run 'rebound list' to see the jobs`);
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

export class IllegalStateError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.ILLEGAL_STATE, message);
  }
}

const CODE_KEY = 'rebound-error-code';

/** Turns any error into a gRPC ServiceError that carries its stable code. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const code: ErrorCode = err instanceof ReboundError ? err.code : ErrorCode.INTERNAL;
  const metadata = new grpc.Metadata();
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
  if (se?.code === grpc.status.UNAVAILABLE || se?.code === grpc.status.DEADLINE_EXCEEDED) {
    return new ReboundError(ErrorCode.UNAVAILABLE, details, { cause: err });
  }
  return new ReboundError(ErrorCode.INTERNAL, details, { cause: err });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
