import { moduleInvalid } from './errors.js';
import type { ExecutionEnvironment } from './environment.js';

/**
 * What a job module default-exports. A plain object with a marker rather than a class: the module
 * is bundled with its own copy of this package, so the runtime cannot use `instanceof`.
 */
export interface JobDefinition {
  readonly __reboundJob: 1;
  readonly name: string;
  readonly build: (env: ExecutionEnvironment, args: string[]) => void | Promise<void>;
}

export function defineJob(
  name: string,
  build: (env: ExecutionEnvironment, args: string[]) => void | Promise<void>,
): JobDefinition {
  if (typeof name !== 'string' || name.trim() === '') {
    throw moduleInvalid("defineJob(name, build): name must be a non-empty string, e.g. defineJob('wordcount', ...)");
  }
  if (typeof build !== 'function') {
    throw moduleInvalid(`defineJob('${name}', build): build must be a function (env, args) => { ... }`);
  }
  return { __reboundJob: 1, name, build };
}

export function isJobDefinition(value: unknown): value is JobDefinition {
  const v = value as Partial<JobDefinition> | null | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.__reboundJob === 1 &&
    typeof v.name === 'string' &&
    v.name !== '' &&
    typeof v.build === 'function'
  );
}
