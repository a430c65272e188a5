import { jobInvalid } from '../errors.js';
import { RangeGeneratorSource, type GeneratorOptions } from './generator-sources.js';

/**
 * The elements of an array, split into index ranges. The array ships with the job: every process
 * builds the job module with the same arguments and so holds the same elements, and a split read
 * again after a failure yields the same ones. Elements cross process boundaries as JSON.
 */
export function collectionSource<T>(elements: readonly T[], options: GeneratorOptions = {}): RangeGeneratorSource<T> {
  if (!Array.isArray(elements)) throw jobInvalid('fromCollection(elements): elements must be an array');
  const copy = elements.slice(); // later changes to the caller's array do not change the job
  return new RangeGeneratorSource('Collection', 0, copy.length, (i) => copy[i]!, options);
}
