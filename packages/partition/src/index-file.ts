import { InvalidArgumentError } from '@rebound/core';
import type { FinishedPartition } from './block-sink.js';
import {
  BLOCK_HEADER_BYTES,
  INDEX_VERSION,
  keyOf,
  normalizePartitionId,
  type NormalizedPartitionId,
  type PartitionIndexFile,
} from './format.js';

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function fail(what: string, detail: string): never {
  throw new InvalidArgumentError(`${what}: ${detail}`);
}

/**
 * Parses an `index` file (from disk, or committed by a producer over the network) and checks
 * that it describes a whole partition: every block has a header, the blocks of all
 * subpartitions together cover the data exactly once, and the byte and record counts add up.
 * `what` names the index in the error. Throws INVALID_ARGUMENT.
 */
export function parseIndexFile(text: string, what: string): PartitionIndexFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    fail(what, `not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof raw !== 'object' || raw === null) fail(what, 'not an object');
  const o = raw as Record<string, unknown>;
  if (o.version !== INDEX_VERSION) fail(what, `version ${String(o.version)}, expected ${INDEX_VERSION}`);
  const id = o.partitionId as Record<string, unknown> | null | undefined;
  if (
    typeof id !== 'object' ||
    id === null ||
    typeof id.job_id !== 'string' ||
    typeof id.vertex_id !== 'string' ||
    !isCount(id.subtask) ||
    !isCount(id.attempt) ||
    !isCount(id.epoch)
  ) {
    fail(what, 'partitionId is malformed');
  }
  const partitionId: NormalizedPartitionId = normalizePartitionId({
    job_id: id.job_id as string,
    vertex_id: id.vertex_id as string,
    subtask: id.subtask as number,
    attempt: id.attempt as number,
    epoch: id.epoch as number,
  });
  const n = o.numSubpartitions;
  if (!isCount(n) || n < 1) fail(what, `numSubpartitions ${String(n)} is not a positive integer`);
  if (!isCount(o.dataBytes)) fail(what, 'dataBytes is not a byte count');
  if (!isCount(o.finishedAtMs)) fail(what, 'finishedAtMs is not a time');
  const perSub = (name: string): number[] => {
    const v = o[name];
    if (!Array.isArray(v) || v.length !== n || !v.every(isCount)) fail(what, `${name} is not ${n} counts`);
    return v as number[];
  };
  const subpartitionBytes = perSub('subpartitionBytes');
  const subpartitionRecords = perSub('subpartitionRecords');
  if (!Array.isArray(o.blocks) || o.blocks.length !== n) fail(what, `blocks is not ${n} lists`);
  const blocks: Array<Array<[number, number]>> = [];
  const all: Array<[number, number]> = [];
  for (let s = 0; s < n; s++) {
    const list = (o.blocks as unknown[])[s];
    if (!Array.isArray(list)) fail(what, `blocks of subpartition ${s} is not a list`);
    let payload = 0;
    const out: Array<[number, number]> = [];
    for (const b of list) {
      if (!Array.isArray(b) || b.length !== 2 || !isCount(b[0]) || !isCount(b[1]) || b[1] < BLOCK_HEADER_BYTES) {
        fail(what, `a block of subpartition ${s} is not [offset, length >= ${BLOCK_HEADER_BYTES}]`);
      }
      const block: [number, number] = [b[0], b[1]];
      if (out.length > 0 && block[0] <= out[out.length - 1]![0]) {
        fail(what, `the blocks of subpartition ${s} are not in write order`);
      }
      payload += block[1] - BLOCK_HEADER_BYTES;
      out.push(block);
      all.push(block);
    }
    if (payload !== subpartitionBytes[s]) {
      fail(
        what,
        `subpartition ${s} has ${payload} payload bytes in its blocks but subpartitionBytes says ${subpartitionBytes[s]}`,
      );
    }
    blocks.push(out);
  }
  all.sort((a, b) => a[0] - b[0]);
  let end = 0;
  for (const [offset, length] of all) {
    if (offset !== end) fail(what, `the blocks leave a gap or overlap at byte ${Math.min(offset, end)}`);
    end = offset + length;
  }
  if (end !== o.dataBytes) fail(what, `the blocks cover ${end} bytes but dataBytes is ${o.dataBytes}`);
  return {
    version: INDEX_VERSION,
    partitionId,
    numSubpartitions: n,
    dataBytes: o.dataBytes,
    blocks,
    subpartitionBytes,
    subpartitionRecords,
    finishedAtMs: o.finishedAtMs,
  };
}

/** The finished partition an index describes, with its blocks in the compact form. */
export function finishedPartitionOf(index: PartitionIndexFile, dir: string): FinishedPartition {
  return {
    id: index.partitionId,
    key: keyOf(index.partitionId),
    dir,
    numSubpartitions: index.numSubpartitions,
    blocks: index.blocks.map((list) => ({
      offsets: Float64Array.from(list, (b) => b[0]),
      lengths: Uint32Array.from(list, (b) => b[1]),
    })),
    subpartitionBytes: [...index.subpartitionBytes],
    subpartitionRecords: [...index.subpartitionRecords],
    totalBytes: index.subpartitionBytes.reduce((a, b) => a + b, 0),
    totalRecords: index.subpartitionRecords.reduce((a, b) => a + b, 0),
    dataBytes: index.dataBytes,
    finishedAtMs: index.finishedAtMs,
  };
}

/**
 * The first difference between a committed index and the one rebuilt from the blocks received
 * (finishedAtMs aside), or undefined when they describe the same partition.
 */
export function indexDifference(committed: PartitionIndexFile, received: PartitionIndexFile): string | undefined {
  const differs = (what: string, c: unknown, r: unknown): string =>
    `${what}: ${String(c)} committed, ${String(r)} received`;
  if (keyOf(committed.partitionId) !== keyOf(received.partitionId)) {
    return differs('partition', keyOf(committed.partitionId), keyOf(received.partitionId));
  }
  if (committed.numSubpartitions !== received.numSubpartitions) {
    return differs('subpartitions', committed.numSubpartitions, received.numSubpartitions);
  }
  if (committed.dataBytes !== received.dataBytes) return differs('data bytes', committed.dataBytes, received.dataBytes);
  for (let s = 0; s < committed.numSubpartitions; s++) {
    const c = committed.blocks[s]!;
    const r = received.blocks[s]!;
    if (c.length !== r.length) return differs(`blocks of subpartition ${s}`, c.length, r.length);
    for (let i = 0; i < c.length; i++) {
      if (c[i]![0] !== r[i]![0] || c[i]![1] !== r[i]![1]) {
        return differs(`block ${i} of subpartition ${s}`, `[${c[i]!.join(', ')}]`, `[${r[i]!.join(', ')}]`);
      }
    }
    if (committed.subpartitionBytes[s] !== received.subpartitionBytes[s]) {
      return differs(
        `payload bytes of subpartition ${s}`,
        committed.subpartitionBytes[s],
        received.subpartitionBytes[s],
      );
    }
    if (committed.subpartitionRecords[s] !== received.subpartitionRecords[s]) {
      return differs(`records of subpartition ${s}`, committed.subpartitionRecords[s], received.subpartitionRecords[s]);
    }
  }
  return undefined;
}
