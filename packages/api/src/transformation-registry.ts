import { jobInvalid } from './errors.js';
import type { Transformation } from './transformations.js';

/** A Transformation the builder may still rename or re-parallelize until the job is built. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type MutableTransformation = Mutable<Transformation>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewTransformation = DistributiveOmit<MutableTransformation, 'id'>;

/**
 * What a DataSet needs from the ExecutionEnvironment that created it. DataSet depends on this
 * interface and the environment implements it, so dataset.ts and environment.ts do not import
 * each other.
 */
export interface TransformationRegistry {
  /** Registers an operator that consumes `inputs` and gives it the next id. */
  addTransformation(t: NewTransformation, ...inputs: MutableTransformation[]): MutableTransformation;
  /** Resolves a user's input or output path against the job's working directory. */
  resolvePath(p: string): string;
}

export function checkParallelism(n: unknown, what: string): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw jobInvalid(`${what}: parallelism must be a positive integer, got ${String(n)}`);
  }
  return n;
}
