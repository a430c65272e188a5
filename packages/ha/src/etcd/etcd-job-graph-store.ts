import { rm } from 'node:fs/promises';
import type { IRequestOp } from 'etcd3';
import {
  decodeMessage,
  encodeMessage,
  errorMessage,
  IllegalStateError,
  type JobGraph,
  type JobGraph__Output,
  JobInvalidError,
  NotLeaderError,
} from '@rebound/core';
import { HaPaths } from '../file/ha-dir.js';
import { DefaultJobGraphStore, isSafeName } from '../job-graph-store.js';
import type { JobRecord, JobRecordDriver } from '../job-record-driver.js';
import { type HaRetryPolicy, withRetries } from '../retrying-job-record-driver.js';
import { type EtcdConnection, prefixEnd } from './etcd-connection.js';

/** The leader epoch writes are fenced by, and whom to tell when a guard fails. */
export interface WriteFence {
  readonly epoch: number;
  onFenced(reason: string): void;
}

/**
 * The JobGraphStore on etcd: the job graph, terminal status and attachments (commit manifest,
 * recovery reports, final status, load attempts) are etcd keys under `/<cluster-id>/jobs/<jobId>/`;
 * the job module is a file in `<storageDir>/jobs/<jobId>/`, written before the graph key, so a job
 * exists once its graph key does. Every write is a transaction guarded by
 * `create_revision(/<cluster-id>/leader) == epoch`: a deposed leader can write nothing.
 */
export class EtcdJobGraphStore extends DefaultJobGraphStore {
  constructor(conn: EtcdConnection, storageDir: string, fence: WriteFence | undefined, retry?: HaRetryPolicy) {
    super(storageDir, withRetries(new EtcdJobRecords(conn, storageDir, fence), retry));
  }
}

/** A job's records as etcd keys; every write guarded by the fence's epoch, if any (else refused). */
export class EtcdJobRecords implements JobRecordDriver {
  readonly recordKind = 'records';

  constructor(
    private readonly conn: EtcdConnection,
    private readonly storageDir: string,
    private readonly fence: WriteFence | undefined,
  ) {}

  where(jobId: string): string {
    return this.conn.keys.jobPrefix(jobId);
  }

  nameOf(jobId: string, record: JobRecord): string {
    return `etcd key ${this.key(jobId, record)}`;
  }

  private key(jobId: string, record: JobRecord): string {
    if (record === 'graph') return this.conn.keys.jobGraph(jobId);
    if (record === 'status') return this.conn.keys.jobStatus(jobId);
    return this.conn.keys.attachment(jobId, record.slice('attachments/'.length));
  }

  async has(jobId: string, record: JobRecord): Promise<boolean> {
    return (await this.conn.get(this.key(jobId, record))).kv !== undefined;
  }

  async get(jobId: string, record: JobRecord): Promise<Uint8Array | undefined> {
    return (await this.conn.get(this.key(jobId, record))).kv?.value;
  }

  async put(jobId: string, record: JobRecord, data: string | Uint8Array, what: string): Promise<void> {
    const key = this.key(jobId, record);
    await this.guarded(what, key, [{ request_put: { key: Buffer.from(key), value: Buffer.from(data) } }]);
  }

  async listAttachments(jobId: string): Promise<string[]> {
    const prefix = this.conn.keys.attachmentsPrefix(jobId);
    return (await this.conn.getPrefix(prefix, true)).map((kv) => kv.key.toString('utf8').slice(prefix.length)).sort();
  }

  async jobIds(): Promise<string[]> {
    return (await this.scan()).ids;
  }

  async unfinishedJobIds(): Promise<string[]> {
    const { ids, terminal } = await this.scan();
    return ids.filter((id) => !terminal.has(id));
  }

  async remove(jobId: string): Promise<void> {
    const prefix = this.conn.keys.jobPrefix(jobId);
    await this.guarded('removing the expired job', prefix, [
      { request_delete_range: { key: Buffer.from(prefix), range_end: prefixEnd(prefix) } },
    ]);
    await rm(HaPaths.jobDir(this.storageDir, jobId), { recursive: true, force: true });
  }

  encodeGraph(graph: JobGraph): Uint8Array {
    return encodeMessage('JobGraph', graph);
  }

  decodeGraph(jobId: string, bytes: Uint8Array): JobGraph__Output {
    try {
      return decodeMessage<JobGraph__Output>('JobGraph', bytes);
    } catch (err) {
      throw new JobInvalidError(`etcd key ${this.key(jobId, 'graph')} cannot be decoded: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  /** Job ids with a graph key, and which of them have a status key. */
  private async scan(): Promise<{ ids: string[]; terminal: Set<string> }> {
    const prefix = this.conn.keys.jobsPrefix;
    const ids: string[] = [];
    const terminal = new Set<string>();
    for (const kv of await this.conn.getPrefix(prefix, true)) {
      const rest = kv.key.toString('utf8').slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) continue;
      const jobId = rest.slice(0, slash);
      const leaf = rest.slice(slash + 1);
      if (leaf === 'graph' && isSafeName(jobId)) ids.push(jobId);
      else if (leaf === 'status') terminal.add(jobId);
    }
    return { ids: ids.sort(), terminal };
  }

  /** Runs `ops` only while the fence's epoch leads; a refused guard ends that leadership. */
  private async guarded(what: string, key: string, ops: IRequestOp[]): Promise<void> {
    const fence = this.fence;
    if (!fence)
      throw new IllegalStateError(`${what} ${key}: this JobGraphStore is read-only (not obtained for a leader epoch)`);
    const leaderKey = Buffer.from(this.conn.keys.leader);
    const res = await this.conn.call(what, key, () =>
      this.conn.client.kv.txn(
        {
          compare: [{ key: leaderKey, target: 'Create', result: 'Equal', create_revision: fence.epoch }],
          success: ops,
          failure: [{ request_range: { key: leaderKey } }],
        },
        this.conn.callOptions(),
      ),
    );
    if (res.succeeded) return;
    const holder = res.responses[0]?.response_range.kvs[0];
    const reason = `${what} ${key} refused: epoch ${fence.epoch} no longer leads (${this.conn.keys.leader} ${holder ? `has create revision ${holder.create_revision}` : 'is absent'})`;
    fence.onFenced(reason);
    throw new NotLeaderError(reason);
  }
}
