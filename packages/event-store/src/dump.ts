import { JobEventStoreCorruptError } from './errors.js';
import { jobEventsDir, listEventFiles } from './format.js';
import type { JobEventRecord, JobEventType } from './job-event.js';
import { JobEventLogReader } from './job-event-log-reader.js';
import type { EventFileInfo, ReplayCut, SealedTail, StaleFile, TornTail } from './replay-report.js';

export interface JobEventsSummary {
  directory: string;
  events: number;
  eventsPerType: Record<JobEventType, number>;
  /** Number of event files. */
  files: number;
  fileDetails: EventFileInfo[];
  bytes: number;
  discardedBytes: number;
  tornTails: TornTail[];
  staleFiles: StaleFile[];
  /** Bytes a newer leader's seal excluded: appended by a JobMaster after it was deposed. */
  sealedTails: SealedTail[];
  /** Set when reading stopped at a torn or corrupt record before the end of the log. */
  cut?: ReplayCut;
  /** Set when reading stopped at something a crash cannot explain. */
  corruption?: { file: string; offset: number; message: string };
}

export interface JobEventsDump {
  events: JobEventRecord[];
  summary: JobEventsSummary;
}

/**
 * Reads a job's event log straight from the HA directory, without a JobMaster (it may be dead):
 * what `rebound events` prints. Corruption does not throw: it ends the dump and is reported in
 * the summary. I/O errors (e.g. permissions) throw.
 */
export async function dumpJobEvents(haDir: string, jobId: string): Promise<JobEventsDump> {
  const directory = jobEventsDir(haDir, jobId);
  const reader = new JobEventLogReader(directory, await listEventFiles(directory), { jobId });
  const events: JobEventRecord[] = [];
  try {
    for (;;) {
      const record = await reader.next();
      if (!record) break;
      events.push(record);
    }
  } catch (err) {
    if (!(err instanceof JobEventStoreCorruptError)) throw err;
  } finally {
    await reader.close();
  }
  const r = reader.report();
  return {
    events,
    summary: {
      directory,
      events: r.events,
      eventsPerType: r.eventsPerType,
      files: r.files.length,
      fileDetails: r.files,
      bytes: r.bytes,
      discardedBytes: r.discardedBytes,
      tornTails: r.tornTails,
      staleFiles: r.staleFiles,
      sealedTails: r.sealedTails,
      ...(r.cut ? { cut: r.cut } : {}),
      ...(r.corruption ? { corruption: r.corruption } : {}),
    },
  };
}

/**
 * One line on where replay stopped and what it left out, for logs, notes and `rebound events`;
 * undefined when the whole log was read.
 */
export function describeReplayCut(cut: ReplayCut | undefined): string | undefined {
  if (!cut) return undefined;
  const at = `${cut.file} offset ${cut.offset} (${cut.reason})`;
  if (cut.expected) return `the newest event file ends in a torn record at ${at}: ${cut.bytes} bytes not replayed`;
  return (
    `the event log is damaged before its end, at ${at}: replayed only what precedes it; ` +
    `${cut.bytes} bytes not replayed, including ${cut.laterFiles.length} later file${cut.laterFiles.length === 1 ? '' : 's'} ` +
    `(${cut.laterFiles.join(', ')}) whose tasks rerun and whose partitions are released`
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

function ranges(list: ReadonlyArray<{ start: number; end: number }>): string {
  const shown = list.slice(0, 4).map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`));
  return list.length > 4 ? `${shown.join(' ')} … (${list.length} subtasks)` : shown.join(' ');
}

/**
 * The remote shuffle's snapshot is JSON (`{v: 1, partitions: [{id, workers}], released?}`): say
 * how many partitions it places on which workers. Any other snapshot is shown by its size only.
 */
function describePlacements(bytes: Uint8Array): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  const j = json as { partitions?: unknown; released?: unknown } | null;
  if (!j || !Array.isArray(j.partitions)) return undefined;
  const perWorker = new Map<string, number>();
  for (const p of j.partitions as { workers?: { worker_id?: unknown }[] }[]) {
    for (const w of Array.isArray(p?.workers) ? p.workers : []) {
      const id = typeof w?.worker_id === 'string' ? w.worker_id : '?';
      perWorker.set(id, (perWorker.get(id) ?? 0) + 1);
    }
  }
  const on = [...perWorker].map(([id, n]) => `${id} ${n}`).join(', ');
  const released = Array.isArray(j.released) && j.released.length > 0 ? `, ${j.released.length} released` : '';
  return `${j.partitions.length} partition${j.partitions.length === 1 ? '' : 's'}${on ? ` on ${on}` : ''}${released}`;
}

function describe(record: JobEventRecord): string {
  switch (record.type) {
    case 'ExecutionJobVertexInitialized': {
      const e = record.event;
      const inputs = e.inputs.map((i) => `${i.producer_vertex_id} [${ranges(i.subtask_ranges)}]`);
      return `${e.vertex_id} parallelism ${e.parallelism}${inputs.length ? `, inputs ${inputs.join(', ')}` : ''}`;
    }
    case 'ExecutionVertexFinished': {
      const e = record.event;
      const parts = [`${e.vertex_id}#${e.subtask} attempt ${e.attempt}`];
      if (e.location) parts.push(`on ${e.location.task_manager_id} (${e.location.address})`);
      if (e.io_metrics) {
        const m = e.io_metrics;
        parts.push(
          `${m.records_in} records in, ${m.records_out} out, ${formatBytes(m.bytes_out)} in ${m.subpartition_bytes.length} subpartitions`,
        );
      }
      if (e.partitions.length) parts.push(`${e.partitions.length} partition${e.partitions.length === 1 ? '' : 's'}`);
      if (e.coordinator_snapshots.length) {
        parts.push(
          `coordinator snapshots of ${e.coordinator_snapshots.map((s) => `${s.operator_id} (${formatBytes(s.state.length)})`).join(', ')}`,
        );
      }
      if (e.coordinator_increments.length) {
        parts.push(`coordinator increments of ${e.coordinator_increments.map((s) => s.operator_id).join(', ')}`);
      }
      if (e.has_shuffle_master_snapshot) {
        const placed = describePlacements(e.shuffle_master_snapshot);
        parts.push(
          `${e.shuffle_master_snapshot_incremental ? 'incremental' : 'full'} shuffle-master snapshot (${formatBytes(e.shuffle_master_snapshot.length)}${placed ? `: ${placed}` : ''})`,
        );
      }
      return parts.join(', ');
    }
    case 'ExecutionVertexReset': {
      const ids = record.event.vertices.map((v) => `${v.vertex_id}#${v.subtask}`);
      return ids.length > 12 ? `${ids.slice(0, 12).join(' ')} … (${ids.length} vertices)` : ids.join(' ');
    }
  }
}

/** One line per event: `events.0:152  2024-…Z  epoch 2  ExecutionVertexFinished  map#3 attempt 0, …`. */
export function formatEventLine(record: JobEventRecord): string {
  const at = `${record.file}:${record.offset}`;
  const time = new Date(record.writtenAtMs).toISOString();
  return `${at.padEnd(16)} ${time}  epoch ${record.epoch}  ${record.type.padEnd(29)} ${describe(record)}`;
}

export function formatSummary(summary: JobEventsSummary): string {
  const lines: string[] = [];
  const perType = Object.entries(summary.eventsPerType)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  lines.push(`events:    ${summary.events} (${perType})`);
  const files = summary.fileDetails.map(
    (f) => `${f.file}${f.epoch !== undefined ? ` epoch ${f.epoch}` : ''} ${formatBytes(f.bytes)} ${f.status}`,
  );
  lines.push(`files:     ${summary.files}${files.length ? ` (${files.join('; ')})` : ''}`);
  lines.push(`bytes:     ${formatBytes(summary.bytes)} (${summary.bytes})`);
  lines.push(
    `discarded: ${formatBytes(summary.discardedBytes)} (${summary.discardedBytes}) in ${summary.tornTails.length} torn tail${summary.tornTails.length === 1 ? '' : 's'}`,
  );
  for (const t of summary.tornTails) {
    lines.push(`  torn tail: ${t.file} from offset ${t.offset}, ${t.bytes} bytes discarded (${t.reason})`);
  }
  const cut = describeReplayCut(summary.cut);
  if (cut) lines.push(`${summary.cut!.expected ? '  cut:     ' : 'DAMAGED:   '}${cut}`);
  for (const s of summary.staleFiles) {
    lines.push(
      `  ignored:   ${s.file} of fenced epoch ${s.epoch}, written after epoch ${s.newerEpoch} (${s.bytes} bytes)`,
    );
  }
  for (const t of summary.sealedTails) {
    lines.push(
      `  sealed:    ${t.file} after ${t.length} bytes by ${t.sealedBy}: ${t.bytes} bytes a deposed JobMaster wrote, ignored`,
    );
  }
  if (summary.corruption) {
    const c = summary.corruption;
    lines.push(`CORRUPT:   ${c.file} at offset ${c.offset}: ${c.message} (events after it were not read)`);
  }
  if (summary.files === 0) lines.push(`(no job events in ${summary.directory})`);
  return lines.join('\n');
}

/** A JSON-safe copy of a record or dump (bytes as base64), for `rebound events --json`. */
export function toJsonValue(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return value;
}
