import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { IRequestOp } from 'etcd3';
import {
  decodeMessage,
  encodeMessage,
  errorMessage,
  ErrorCode,
  IllegalStateError,
  type JobGraph,
  type JobGraph__Output,
  JobNotFoundError,
  NotLeaderError,
  ReboundError,
  writeFileAtomic,
} from '@rebound/core';
import { HaPaths, TMP_MARKER } from '../ha-dir.js';
import type { JobGraphStore } from '../ha-services.js';
import { JOB_MODULE_FILE, decodeTerminalStatus, encodeTerminalStatus, type StoredJob, type StoredJobSummary, type TerminalJobStatus } from '../job-graph-store.js';
import { type EtcdConnection, prefixEnd } from './etcd-connection.js';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name) && !name.includes(TMP_MARKER);
}

function checkJobId(jobId: string): void {
  if (!isSafeName(jobId)) {
    throw new ReboundError(ErrorCode.JOB_INVALID, `job id '${jobId}' is not usable as a key or directory name; use letters, digits, '-', '_' or '.'`);
  }
}

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
export class EtcdJobGraphStore implements JobGraphStore {
  constructor(
    private readonly conn: EtcdConnection,
    private readonly storageDir: string,
    private readonly fence: WriteFence | undefined,
  ) {}

  private moduleDir(jobId: string): string {
    checkJobId(jobId);
    return HaPaths.jobDir(this.storageDir, jobId);
  }

  /** Runs `ops` only while the fence's epoch leads; a refused guard ends that leadership. */
  private async guarded(what: string, key: string, ops: IRequestOp[]): Promise<void> {
    const fence = this.fence;
    if (!fence) throw new IllegalStateError(`${what} ${key}: this JobGraphStore is read-only (not obtained for a leader epoch)`);
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

  private put(key: string, value: string | Uint8Array): IRequestOp {
    return { request_put: { key: Buffer.from(key), value: Buffer.from(value) } };
  }

  async putJob(graph: JobGraph, moduleBundle: Uint8Array): Promise<void> {
    const jobId = graph.job_id ?? '';
    await writeFileAtomic(join(this.moduleDir(jobId), JOB_MODULE_FILE), moduleBundle);
    const key = this.conn.keys.jobGraph(jobId);
    await this.guarded('storing the job graph', key, [this.put(key, encodeMessage('JobGraph', graph))]);
  }

  async hasJob(jobId: string): Promise<boolean> {
    if (!isSafeName(jobId)) return false;
    return (await this.conn.get(this.conn.keys.jobGraph(jobId))).kv !== undefined;
  }

  async getJob(jobId: string): Promise<StoredJob> {
    if (!isSafeName(jobId)) throw new JobNotFoundError(jobId);
    const key = this.conn.keys.jobGraph(jobId);
    const { kv } = await this.conn.get(key);
    if (!kv) throw new JobNotFoundError(jobId);
    let graph: JobGraph__Output;
    try {
      graph = decodeMessage<JobGraph__Output>('JobGraph', kv.value);
    } catch (err) {
      throw new ReboundError(ErrorCode.JOB_INVALID, `etcd key ${key} cannot be decoded: ${errorMessage(err)}`, { cause: err });
    }
    return { graph, modulePath: join(this.moduleDir(jobId), JOB_MODULE_FILE) };
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

  async listJobIds(): Promise<string[]> {
    return (await this.scan()).ids;
  }

  async markTerminal(jobId: string, status: TerminalJobStatus): Promise<void> {
    const record = encodeTerminalStatus(status);
    await this.requireJob(jobId);
    const key = this.conn.keys.jobStatus(jobId);
    await this.guarded('recording the terminal status', key, [this.put(key, record)]);
  }

  async getTerminalStatus(jobId: string): Promise<TerminalJobStatus | undefined> {
    await this.requireJob(jobId);
    const key = this.conn.keys.jobStatus(jobId);
    const { kv } = await this.conn.get(key);
    if (!kv) return undefined;
    return decodeTerminalStatus(kv.value.toString('utf8'), `etcd key ${key}`);
  }

  async listJobs(): Promise<StoredJobSummary[]> {
    const jobs: StoredJobSummary[] = [];
    for (const jobId of await this.listJobIds()) {
      try {
        const { graph } = await this.getJob(jobId);
        jobs.push({ jobId, name: graph.name, submittedAtMs: graph.submitted_at_ms, status: await this.getTerminalStatus(jobId) });
      } catch (err) {
        if (err instanceof JobNotFoundError) continue;
        // etcd being unreachable is not damage: the whole listing fails instead.
        if (err instanceof ReboundError && err.code === ErrorCode.UNAVAILABLE) throw err;
        jobs.push({ jobId, name: '', submittedAtMs: 0, status: undefined, damage: `stored records of this job cannot be read (${errorMessage(err)}); it is not run or recovered: inspect or remove ${this.conn.keys.jobPrefix(jobId)}` });
      }
    }
    return jobs.sort((a, b) => a.submittedAtMs - b.submittedAtMs || a.jobId.localeCompare(b.jobId));
  }

  async listUnfinishedJobs(): Promise<{ readonly jobId: string; readonly damage?: string }[]> {
    const { ids, terminal } = await this.scan();
    return ids.filter((id) => !terminal.has(id)).map((jobId) => ({ jobId }));
  }

  async removeExpiredJobs(nowMs: number, retentionMs: number): Promise<string[]> {
    const removed: string[] = [];
    for (const jobId of await this.listJobIds()) {
      const status = await this.getTerminalStatus(jobId).catch(() => undefined);
      if (!status || status.finishedAtMs + retentionMs > nowMs) continue;
      const prefix = this.conn.keys.jobPrefix(jobId);
      await this.guarded('removing the expired job', prefix, [{ request_delete_range: { key: Buffer.from(prefix), range_end: prefixEnd(prefix) } }]);
      await rm(this.moduleDir(jobId), { recursive: true, force: true });
      removed.push(jobId);
    }
    return removed;
  }

  async putJobAttachment(jobId: string, name: string, data: string | Uint8Array): Promise<void> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    const key = this.conn.keys.attachment(jobId, name);
    await this.guarded('storing the job attachment', key, [this.put(key, data)]);
  }

  async getJobAttachment(jobId: string, name: string): Promise<Uint8Array | undefined> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    const { kv } = await this.conn.get(this.conn.keys.attachment(jobId, name));
    return kv ? new Uint8Array(kv.value) : undefined;
  }

  async listJobAttachments(jobId: string): Promise<string[]> {
    await this.requireJob(jobId);
    const prefix = this.conn.keys.attachmentsPrefix(jobId);
    return (await this.conn.getPrefix(prefix, true)).map((kv) => kv.key.toString('utf8').slice(prefix.length)).sort();
  }

  private async requireJob(jobId: string): Promise<void> {
    if (!(await this.hasJob(jobId))) throw new JobNotFoundError(jobId);
  }
}

function checkAttachmentName(name: string): void {
  if (!isSafeName(name)) throw new ReboundError(ErrorCode.ILLEGAL_STATE, `job attachment name '${name}' is not a plain name`);
}
