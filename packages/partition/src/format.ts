import { join } from 'node:path';
import { IllegalStateError, PartitionNotFoundError, crc32c, partitionKey } from '@rebound/core';
import type { ResultPartitionId } from '@rebound/core';

/**
 * On-disk layout of a blocking result partition (see README.md in this folder):
 *
 *   <dataDir>/partitions/<jobId>/<vertexId>-<subtask>-<attempt>-e<epoch>/data    blocks, in write order
 *   <dataDir>/partitions/<jobId>/<vertexId>-<subtask>-<attempt>-e<epoch>/index   JSON, written at finish
 *
 * Block = [u32 subpartition][u32 payload length][u32 record count][u32 crc32c(payload)][payload],
 * all integers big-endian.
 */
export const BLOCK_HEADER_BYTES = 16;
export const PARTITIONS_DIR = 'partitions';
export const DATA_FILE = 'data';
export const INDEX_FILE = 'index';
export const INDEX_VERSION = 1;

export type PartitionIdLike = Pick<ResultPartitionId, 'job_id' | 'vertex_id' | 'subtask' | 'attempt' | 'epoch'>;

/** The fully populated id (proto3 defaults filled), so ids compare and serialize alike. */
export interface NormalizedPartitionId {
  job_id: string;
  vertex_id: string;
  subtask: number;
  attempt: number;
  epoch: number;
}

export function normalizePartitionId(id: PartitionIdLike): NormalizedPartitionId {
  return {
    job_id: id.job_id ?? '',
    vertex_id: id.vertex_id ?? '',
    subtask: id.subtask ?? 0,
    attempt: id.attempt ?? 0,
    epoch: Number(id.epoch ?? 0),
  };
}

export function keyOf(id: PartitionIdLike): string {
  return partitionKey(normalizePartitionId(id));
}

// Ids become path segments: refuse anything that could escape the partitions directory.
const SAFE_SEGMENT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

function safeSegment(what: string, value: string): string {
  if (!SAFE_SEGMENT.test(value) || value === '.' || value === '..') {
    throw new IllegalStateError(
      `${what} '${value}' cannot name a partition directory (allowed: letters, digits, '_', '.', '-')`,
    );
  }
  return value;
}

export function partitionsRoot(dataDir: string): string {
  return join(dataDir, PARTITIONS_DIR);
}

export function jobPartitionsDir(dataDir: string, jobId: string): string {
  return join(partitionsRoot(dataDir), safeSegment('job id', jobId));
}

export function partitionDir(dataDir: string, id: PartitionIdLike): string {
  const n = normalizePartitionId(id);
  if ([n.subtask, n.attempt, n.epoch].some((v) => !Number.isInteger(v) || v < 0)) {
    throw new IllegalStateError(`partition ${keyOf(n)} has a negative or fractional subtask/attempt/epoch`);
  }
  return join(
    jobPartitionsDir(dataDir, n.job_id),
    `${safeSegment('vertex id', n.vertex_id)}-${n.subtask}-${n.attempt}-e${n.epoch}`,
  );
}

/** Contents of the `index` file. */
export interface PartitionIndexFile {
  version: number;
  partitionId: NormalizedPartitionId;
  numSubpartitions: number;
  /** Length of the data file in bytes. */
  dataBytes: number;
  /** Per subpartition, the [offset, length] of each of its blocks (header included), in order. */
  blocks: Array<Array<[number, number]>>;
  /** Per subpartition, payload bytes (what is reported as subpartition_bytes). */
  subpartitionBytes: number[];
  subpartitionRecords: number[];
  finishedAtMs: number;
}

export function writeBlockHeader(block: Buffer, subpartition: number, payloadLength: number, records: number): void {
  block.writeUInt32BE(subpartition, 0);
  block.writeUInt32BE(payloadLength, 4);
  block.writeUInt32BE(records, 8);
  block.writeUInt32BE(crc32c(block, BLOCK_HEADER_BYTES, BLOCK_HEADER_BYTES + payloadLength), 12);
}

/**
 * A block whose header or checksum does not match. It carries the PARTITION_NOT_FOUND code on
 * purpose: the data is lost exactly as if the partition were gone, and the JobMaster's answer is
 * the same (rerun the producer).
 */
export class PartitionCorruptError extends PartitionNotFoundError {
  constructor(partitionId: string, detail: string) {
    super(partitionId, `corrupt data: ${detail}`);
  }
}

/** Checks a block read from disk and returns its payload. */
export function verifyBlock(key: string, block: Buffer, expectedSubpartition: number, offset: number): Buffer {
  if (block.length < BLOCK_HEADER_BYTES) {
    throw new PartitionCorruptError(key, `block at offset ${offset} is truncated (${block.length} bytes)`);
  }
  const sub = block.readUInt32BE(0);
  const len = block.readUInt32BE(4);
  const crc = block.readUInt32BE(12);
  if (sub !== expectedSubpartition || len !== block.length - BLOCK_HEADER_BYTES) {
    throw new PartitionCorruptError(
      key,
      `block at offset ${offset} has header (subpartition ${sub}, ${len} bytes) but the index says (subpartition ${expectedSubpartition}, ${block.length - BLOCK_HEADER_BYTES} bytes)`,
    );
  }
  const payload = block.subarray(BLOCK_HEADER_BYTES);
  const actual = crc32c(block, BLOCK_HEADER_BYTES);
  if (actual !== crc) {
    throw new PartitionCorruptError(
      key,
      `checksum mismatch in block at offset ${offset} of subpartition ${sub} (stored ${crc.toString(16)}, computed ${actual.toString(16)})`,
    );
  }
  return payload;
}
