import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type JobGraph, type JobGraph__Output, JobInvalidError, writeFileAtomic } from '@rebound/core';
import { HaPaths, isErrno, TMP_MARKER } from './ha-dir.js';
import { DefaultJobGraphStore, isSafeName, JOB_GRAPH_FILE, JOB_STATUS_FILE } from '../job-graph-store.js';
import type { JobRecord, JobRecordDriver } from '../job-record-driver.js';
import { type HaRetryPolicy, withRetries } from '../retrying-job-record-driver.js';
import { decodeJobGraphFile, encodeJobGraphFile } from './job-graph-file.js';

const ATTACHMENTS_DIR = 'attachments';

/**
 * Submitted jobs kept under `<ha>/jobs/<jobId>/` (the file backend's JobGraphStore). Every file is
 * written atomically; jobgraph.pb is written last, so a job exists once it does.
 */
export class FileJobGraphStore extends DefaultJobGraphStore {
  constructor(haDir: string, retry?: HaRetryPolicy) {
    super(haDir, withRetries(new FileJobRecords(haDir), retry));
  }
}

/** A job's records as files: jobgraph.pb (framed, checksummed), status.json, attachments/<name>. */
export class FileJobRecords implements JobRecordDriver {
  readonly recordKind = 'files';

  constructor(private readonly haDir: string) {}

  where(jobId: string): string {
    return HaPaths.jobDir(this.haDir, jobId);
  }

  nameOf(jobId: string, record: JobRecord): string {
    const dir = this.where(jobId);
    if (record === 'graph') return join(dir, JOB_GRAPH_FILE);
    if (record === 'status') return join(dir, JOB_STATUS_FILE);
    return join(dir, ATTACHMENTS_DIR, record.slice(`${ATTACHMENTS_DIR}/`.length));
  }

  async has(jobId: string, record: JobRecord): Promise<boolean> {
    try {
      return (await stat(this.nameOf(jobId, record))).isFile();
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return false;
      throw err;
    }
  }

  async get(jobId: string, record: JobRecord): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.nameOf(jobId, record));
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
      throw err;
    }
  }

  put(jobId: string, record: JobRecord, data: string | Uint8Array): Promise<void> {
    return writeFileAtomic(this.nameOf(jobId, record), data);
  }

  async listAttachments(jobId: string): Promise<string[]> {
    try {
      const names = await readdir(join(this.where(jobId), ATTACHMENTS_DIR));
      return names.filter((n) => !n.includes(TMP_MARKER)).sort();
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    }
  }

  async jobIds(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(HaPaths.jobsDir(this.haDir));
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
      throw err;
    }
    const ids: string[] = [];
    for (const name of entries.sort()) {
      if (isSafeName(name) && (await this.has(name, 'graph'))) ids.push(name);
    }
    return ids;
  }

  async remove(jobId: string): Promise<void> {
    // jobgraph.pb first: without it the directory is no longer a job, even if the rest of the
    // removal is cut short.
    await rm(this.nameOf(jobId, 'graph'), { force: true });
    await rm(this.where(jobId), { recursive: true, force: true });
  }

  encodeGraph(graph: JobGraph): Uint8Array {
    return encodeJobGraphFile(graph);
  }

  decodeGraph(jobId: string, bytes: Uint8Array): JobGraph__Output {
    const path = this.nameOf(jobId, 'graph');
    const graph = decodeJobGraphFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), path);
    // A zero-filled file has no frame and decodes as an empty graph: only a graph that names this
    // job is its graph.
    if (graph.job_id !== jobId) {
      throw new JobInvalidError(`${path} names job '${graph.job_id}', not ${jobId}: it is not this job's graph`);
    }
    return graph;
  }
}
