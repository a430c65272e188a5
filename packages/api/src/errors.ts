import { ErrorCode, ReboundError } from '@rebound/core';

/**
 * A job module is bundled with its own copy of @rebound/api, in which `@rebound/core` is replaced
 * by a small shim (see module-bundle.ts). The shim takes ReboundError from this registry, so
 * errors thrown by bundled code are the runtime's ReboundError and keep their codes across gRPC.
 * `??=`: the first copy loaded (the runtime's, which loads the module) wins.
 */
export const CORE_REGISTRY_KEY = Symbol.for('rebound.api.core');

const registry = globalThis as {
  [CORE_REGISTRY_KEY]?: { ReboundError: typeof ReboundError; ErrorCode: typeof ErrorCode };
};
registry[CORE_REGISTRY_KEY] ??= { ReboundError, ErrorCode };

/*
 * The API's own subclasses rather than core's: bundled into a job module, @rebound/api sees only the
 * shim's ReboundError and ErrorCode (module-bundle.ts), so its classes are built on those two.
 */

/** A job built with the API that cannot run as written (JOB_INVALID). */
export class JobDefinitionError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.JOB_INVALID, message, options);
  }
}

/** A job module that cannot be bundled or loaded (JOB_MODULE_INVALID). */
export class JobModuleError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.JOB_MODULE_INVALID, message, options);
  }
}

/** A user function broke the API's contract (USER_CODE). */
export class UserFunctionError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.USER_CODE, message, options);
  }
}

/** A source asked for something its state does not allow, or given a state it cannot use (ILLEGAL_STATE). */
export class SourceStateError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.ILLEGAL_STATE, message, options);
  }
}

export function jobInvalid(message: string, cause?: unknown): ReboundError {
  return new JobDefinitionError(message, cause === undefined ? undefined : { cause });
}

export function moduleInvalid(message: string, cause?: unknown): ReboundError {
  return new JobModuleError(message, cause === undefined ? undefined : { cause });
}

export function userCodeError(message: string): ReboundError {
  return new UserFunctionError(message);
}

/** The error's code, also for errors of another copy of the class (no `instanceof`). */
export function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** First line of an error's message: errors of job modules end up in one-line CLI messages. */
export function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n', 1)[0]!.trim();
}
