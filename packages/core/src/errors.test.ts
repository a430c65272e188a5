import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  ErrorCode,
  InvalidArgumentError,
  NotLeaderError,
  ReboundError,
  SlotUnavailableError,
  StaleEpochError,
  TaskCanceledError,
  UnavailableError,
  UserCodeError,
  fromServiceError,
  isNotLeader,
  toServiceError,
} from './errors.js';

/** What a caller of a failed RPC gets back: the status object decoded by fromServiceError. */
const overGrpc = (err: unknown): ReboundError => fromServiceError(toServiceError(err));

describe('typed errors over gRPC', () => {
  it.each([
    [new AlreadyExistsError('partition exists'), ErrorCode.ALREADY_EXISTS, grpc.status.ALREADY_EXISTS],
    [new InvalidArgumentError('bad position'), ErrorCode.INVALID_ARGUMENT, grpc.status.INVALID_ARGUMENT],
    [new UserCodeError('map failed'), ErrorCode.USER_CODE, grpc.status.ABORTED],
    [new TaskCanceledError('canceled'), ErrorCode.TASK_CANCELED, grpc.status.CANCELLED],
    [new SlotUnavailableError('all slots busy'), ErrorCode.SLOT_UNAVAILABLE, grpc.status.RESOURCE_EXHAUSTED],
    [new StaleEpochError(1, 2, 'split request of epoch 1'), ErrorCode.STALE_EPOCH, grpc.status.FAILED_PRECONDITION],
  ])('%s keeps its code, status and message', (err, code, status) => {
    expect(err.code).toBe(code);
    expect(toServiceError(err).code).toBe(status);
    const back = overGrpc(err);
    expect(back.code).toBe(code);
    expect(back.message).toBe(err.message);
  });

  it('StaleEpochError says which epochs without a message of its own', () => {
    expect(new StaleEpochError(3, 5).message).toBe('request from leader epoch 3 rejected: epoch 5 is newer');
  });
});

describe('isNotLeader', () => {
  it('is true for a NotLeaderError, also after it crossed gRPC', () => {
    expect(isNotLeader(new NotLeaderError())).toBe(true);
    expect(isNotLeader(overGrpc(new NotLeaderError('leadership ended')))).toBe(true);
  });

  it('is false for other errors and non-errors', () => {
    expect(isNotLeader(new UnavailableError('no answer'))).toBe(false);
    expect(isNotLeader(new Error('NOT_LEADER'))).toBe(false);
    expect(isNotLeader({ code: ErrorCode.NOT_LEADER })).toBe(false);
    expect(isNotLeader(undefined)).toBe(false);
  });
});
