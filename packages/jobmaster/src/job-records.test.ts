import { JobNotFoundError, ReboundError, encodeMessage, type RecoveryReport } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { JobRecordName, JobRecords, type JobRecordStore } from './job-records.js';
import { CommitManifestRefusedError } from './sink-committer.js';

/** Attachments of one job in memory; `failing` names whose reads fail like an unreachable backend. */
class MemoryStore implements JobRecordStore {
  readonly files = new Map<string, Uint8Array>();
  readonly failing = new Set<string>();

  constructor(readonly jobId = 'job-1') {}

  getJobAttachment(jobId: string, name: string): Promise<Uint8Array | undefined> {
    if (jobId !== this.jobId) return Promise.reject(new JobNotFoundError(jobId));
    if (this.failing.has(name)) return Promise.reject(new Error('backend unavailable'));
    return Promise.resolve(this.files.get(name));
  }

  putJobAttachment(jobId: string, name: string, data: string | Uint8Array): Promise<void> {
    if (jobId !== this.jobId) return Promise.reject(new JobNotFoundError(jobId));
    this.files.set(name, typeof data === 'string' ? Buffer.from(data) : data);
    return Promise.resolve();
  }

  write(name: string, text: string): void {
    this.files.set(name, Buffer.from(text));
  }
}

const report = { epoch: 2, restarted_from_scratch: false } as RecoveryReport;

describe('JobRecords', () => {
  it('reads back every record as it was written', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    await records.saveRecoveries('job-1', [report]);
    const manifest = {
      jobId: 'job-1',
      entries: [{ temp: '/out/.rebound-tmp/job-1/sink-0-a0-e1', final: '/out/part-00000' }],
      directories: ['/out'],
    };
    await records.saveCommitManifest('job-1', manifest);
    await records.saveLoadAttempts('job-1', 2, 7);
    const history = { entries: [], truncated: true };
    await records.saveExceptions('job-1', history);
    await records.saveFinalStatus('job-1', { job_id: 'job-1', name: 'n', state: 'FINISHED', vertices: [] });

    expect(await records.recoveries('job-1')).toEqual({ reports: [report] });
    expect(await records.commitManifest('job-1', ['/out'])).toEqual(manifest);
    expect(await records.loadAttempts('job-1')).toEqual({ attempts: 2 });
    expect(JSON.parse(Buffer.from(store.files.get(JobRecordName.loadAttempts)!).toString())).toEqual({
      attempts: 2,
      epoch: 7,
    });
    expect(await records.exceptions('job-1')).toEqual(history);
    expect((await records.finalStatus('job-1'))?.state).toBe('FINISHED');
  });

  it('reads absent records, and those of a job that is gone, as their empty value', async () => {
    const records = new JobRecords(new MemoryStore());
    for (const jobId of ['job-1', 'gone']) {
      expect(await records.recoveries(jobId)).toEqual({ reports: [] });
      expect(await records.commitManifest(jobId, ['/out'])).toBeUndefined();
      expect(await records.loadAttempts(jobId)).toEqual({ attempts: 0 });
      expect(await records.exceptions(jobId)).toEqual({ entries: [], truncated: false });
      expect(await records.finalStatus(jobId)).toBeUndefined();
    }
  });

  it('reports damaged recoveries as none, with the reason, torn or unreadable', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    store.write(JobRecordName.recoveries, '[{"epoch":2');
    expect(await records.recoveries('job-1')).toEqual({
      reports: [],
      damage: 'recoveries.json is not a JSON array of recovery reports',
    });
    store.write(JobRecordName.recoveries, '{"epoch":2}');
    expect((await records.recoveries('job-1')).damage).toMatch(/not a JSON array/);
    store.failing.add(JobRecordName.recoveries);
    expect(await records.recoveries('job-1')).toEqual({
      reports: [],
      damage: 'recoveries.json cannot be read: backend unavailable',
    });
  });

  it('refuses a damaged commit manifest: neither completing nor rerunning the job is safe', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    store.write(JobRecordName.commitManifest, '{"jobId":"job-1","entr');
    await expect(records.commitManifest('job-1', ['/out'])).rejects.toBeInstanceOf(CommitManifestRefusedError);
    store.failing.add(JobRecordName.commitManifest);
    await expect(records.commitManifest('job-1', ['/out'])).rejects.toThrow(
      /commit\.json cannot be read: backend unavailable/,
    );
  });

  it('restarts a damaged load-attempt count from 0 and says so', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    store.write(JobRecordName.loadAttempts, 'garbage');
    expect(await records.loadAttempts('job-1')).toEqual({
      attempts: 0,
      damage: 'load-attempts.json holds no attempt count',
    });
    store.failing.add(JobRecordName.loadAttempts);
    expect((await records.loadAttempts('job-1')).damage).toMatch(/cannot be read/);
  });

  it('makes the read capability once and keeps it; an unreadable one is an error', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    const first = await records.readCapability('job-1');
    expect(first.length).toBeGreaterThan(10);
    expect(await records.readCapability('job-1')).toBe(first);
    store.failing.add(JobRecordName.readCapability);
    await expect(records.readCapability('job-1')).rejects.toThrow(/backend unavailable/);
    await expect(new JobRecords(store).readCapability('gone')).rejects.toBeInstanceOf(ReboundError);
  });

  it('reads a damaged exception history as empty and a damaged final status as absent', async () => {
    const store = new MemoryStore();
    const records = new JobRecords(store);
    store.write(JobRecordName.exceptions, '{not json');
    expect(await records.exceptions('job-1')).toEqual({ entries: [], truncated: false });
    store.write(JobRecordName.exceptions, '{"entries":"x","truncated":true}');
    expect(await records.exceptions('job-1')).toEqual({ entries: [], truncated: true });
    store.files.set(JobRecordName.finalStatus, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(await records.finalStatus('job-1')).toBeUndefined();
    store.failing.add(JobRecordName.finalStatus);
    expect(await records.finalStatus('job-1')).toBeUndefined();
    // A well-formed status still decodes after the failures above are gone.
    store.failing.clear();
    store.files.set(JobRecordName.finalStatus, encodeMessage('JobStatus', { job_id: 'job-1', state: 'FAILED' }));
    expect((await records.finalStatus('job-1'))?.state).toBe('FAILED');
  });
});
