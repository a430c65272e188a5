import { ErrorCode, ReboundError } from '@rebound/core';

/**
 * A job module is bundled with its own copy of @rebound/api, in which `@rebound/core` is replaced
 * by a small shim (see module-bundle.ts). The shim takes ReboundError from this registry, so
 * errors thrown by bundled code are the runtime's ReboundError and keep their codes across gRPC.
 * `??=`: the first copy loaded (the runtime's, which loads the module) wins.
 */
export const CORE_REGISTRY_KEY = Symbol.for('rebound.api.core');

const registry = globalThis as { [CORE_REGISTRY_KEY]?: { ReboundError: typeof ReboundError; ErrorCode: typeof ErrorCode } };
registry[CORE_REGISTRY_KEY] ??= { ReboundError, ErrorCode };

export function jobInvalid(message: string, cause?: unknown): ReboundError {
  return new ReboundError(ErrorCode.JOB_INVALID, message, cause === undefined ? undefined : { cause });
}

export function moduleInvalid(message: string, cause?: unknown): ReboundError {
  return new ReboundError(ErrorCode.JOB_MODULE_INVALID, message, cause === undefined ? undefined : { cause });
}

export function userCodeError(message: string): ReboundError {
  return new ReboundError(ErrorCode.USER_CODE, message);
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
