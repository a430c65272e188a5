import { InvalidArgumentError, partitionKey } from '@rebound/core';
import type { ResultPartitionId__Output, ShuffleWorkerLocation__Output } from '@rebound/core';

/** The shuffle workers one partition was written to, first the primary. */
export interface PartitionPlacement {
  readonly id: ResultPartitionId__Output;
  readonly workers: readonly ShuffleWorkerLocation__Output[];
}

/** A snapshot's bytes: UTF-8 JSON, so that `rebound events` can print it as it is. */
interface SnapshotJson {
  readonly v: 1;
  readonly partitions: readonly PartitionPlacement[];
  readonly released?: readonly string[];
}

/**
 * One job's placements, as the RemoteShuffleMaster keeps them and the event log records them: a
 * full snapshot is every placement, an incremental one those registered (and the keys released)
 * since the previous snapshot.
 */
export class JobPlacements {
  private readonly placements = new Map<string, PartitionPlacement>();
  private added: PartitionPlacement[] = [];
  private released: string[] = [];

  add(placement: PartitionPlacement): void {
    const key = partitionKey(placement.id);
    this.placements.set(key, placement);
    this.added.push(placement);
  }

  release(key: string): void {
    if (!this.placements.delete(key)) return;
    this.released.push(key);
  }

  get(key: string): PartitionPlacement | undefined {
    return this.placements.get(key);
  }

  all(): PartitionPlacement[] {
    return [...this.placements.values()];
  }

  /** Every worker id any placement names. */
  workerIds(): Set<string> {
    const ids = new Set<string>();
    for (const p of this.placements.values()) for (const w of p.workers) ids.add(w.worker_id);
    return ids;
  }

  /** The bytes of the next snapshot; undefined when an increment would be empty. */
  snapshot(full: boolean): Uint8Array | undefined {
    const json: SnapshotJson = full
      ? { v: 1, partitions: this.all() }
      : { v: 1, partitions: this.added, ...(this.released.length > 0 ? { released: this.released } : {}) };
    this.added = [];
    this.released = [];
    if (!full && json.partitions.length === 0 && !json.released) return undefined;
    return new TextEncoder().encode(JSON.stringify(json));
  }

  /** Applies a snapshot read from the event log: a full one replaces everything. */
  apply(bytes: Uint8Array, incremental: boolean): void {
    const json = parseSnapshot(bytes);
    if (!incremental) this.placements.clear();
    for (const p of json.partitions) this.placements.set(partitionKey(p.id), p);
    for (const key of json.released ?? []) this.placements.delete(key);
    this.added = [];
    this.released = [];
  }
}

function parseSnapshot(bytes: Uint8Array): SnapshotJson {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new InvalidArgumentError(`a remote shuffle snapshot is not JSON: ${(err as Error).message}`);
  }
  const j = json as Partial<SnapshotJson> | null;
  if (!j || j.v !== 1 || !Array.isArray(j.partitions)) {
    throw new InvalidArgumentError('a remote shuffle snapshot has no version 1 partition list');
  }
  for (const p of j.partitions as unknown[]) {
    const q = p as Partial<PartitionPlacement> | null;
    if (!q?.id || typeof q.id.vertex_id !== 'string' || !Array.isArray(q.workers)) {
      throw new InvalidArgumentError('a remote shuffle snapshot has a malformed placement');
    }
  }
  return j as SnapshotJson;
}
