/**
 * Numbers the distinct keys of a keyed aggregation 0, 1, 2, ... in first-seen order. String keys
 * (words, and the canonical text groupingKey makes of array and object keys) live in an
 * open-addressing table that keeps each key's hash and slot side by side in one Int32Array: a
 * lookup touches that pair and, when the hashes match, the key string. On 300k distinct words
 * this took 0.7-1.0 CPU s where V8's Map took 2.1-2.5 s for the same 3.3M lookups (its chained
 * buckets cost more cache misses per lookup on a table that size); on 3,300 words it is on par.
 * Other keys (numbers, booleans, null, ...) go to a Map.
 */
const INITIAL_CAPACITY = 1024;

export class KeySlots {
  private capacity = INITIAL_CAPACITY;
  private mask = INITIAL_CAPACITY - 1;
  /** [hash | 1, slot] per position; hash 0 marks an empty position. */
  private entries = new Int32Array(INITIAL_CAPACITY * 2);
  private keys: (string | undefined)[] = new Array<string | undefined>(INITIAL_CAPACITY);
  private strings = 0;
  private readonly others = new Map<unknown, number>();

  /** The slot of `key`; a new key gets `next` (which the caller takes as its next free slot). */
  slotOf(key: unknown, next: number): number {
    if (typeof key !== 'string') {
      const slot = this.others.get(key);
      if (slot !== undefined) return slot;
      this.others.set(key, next);
      return next;
    }
    const h = hashString(key);
    const entries = this.entries;
    const mask = this.mask;
    let i = h & mask;
    for (;;) {
      const at = entries[2 * i]!;
      if (at === 0) break;
      if (at === h && this.keys[i] === key) return entries[2 * i + 1]!;
      i = (i + 1) & mask;
    }
    if (2 * (this.strings + 1) > this.capacity) {
      this.grow();
      i = h & this.mask;
      while (this.entries[2 * i] !== 0) i = (i + 1) & this.mask;
    }
    this.entries[2 * i] = h;
    this.entries[2 * i + 1] = next;
    this.keys[i] = key;
    this.strings++;
    return next;
  }

  clear(): void {
    this.capacity = INITIAL_CAPACITY;
    this.mask = INITIAL_CAPACITY - 1;
    this.entries = new Int32Array(INITIAL_CAPACITY * 2);
    this.keys = new Array<string | undefined>(INITIAL_CAPACITY);
    this.strings = 0;
    this.others.clear();
  }

  private grow(): void {
    const oldEntries = this.entries;
    const oldKeys = this.keys;
    this.capacity *= 2;
    this.mask = this.capacity - 1;
    this.entries = new Int32Array(this.capacity * 2);
    this.keys = new Array<string | undefined>(this.capacity);
    for (let j = 0; j < oldKeys.length; j++) {
      const key = oldKeys[j];
      if (key === undefined) continue;
      const h = oldEntries[2 * j]!;
      let i = h & this.mask;
      while (this.entries[2 * i] !== 0) i = (i + 1) & this.mask;
      this.entries[2 * i] = h;
      this.entries[2 * i + 1] = oldEntries[2 * j + 1]!;
      this.keys[i] = key;
    }
  }
}

/** FNV-1a over the UTF-16 code units, spread with a final mix; never 0 (the empty mark). */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h | 1;
}
