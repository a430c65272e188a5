/**
 * murmur3's 32-bit finalizer (fmix32): spreads every input bit over the whole word, so that
 * `h % n` is well spread even for sequential inputs. The one mixer of the tree: key partitioning
 * (@rebound/api), the examples' deterministic data and the chaos PRNG's seeding all go through it,
 * and partitioning must stay bit-identical across versions.
 *
 * Free of imports on purpose: job module bundles replace `@rebound/core` by a small shim, and take
 * this file in through its own subpath (`@rebound/core/hash`).
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
