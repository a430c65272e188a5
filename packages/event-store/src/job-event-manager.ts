import { IllegalStateError, ReboundError, errorMessage, type Clock, systemClock } from '@rebound/core';
import { JobEventStoreCorruptError, JobEventStoreFailedError } from './errors.js';
import type { JobEvent, JobEventRecord } from './job-event.js';
import type { JobEventLogReader } from './job-event-log-reader.js';
import type { ReplayReport } from './replay-report.js';
import type { JobEventStore } from './job-event-store.js';

/** Receives the events of a replay (Flink's JobEventReplayHandler). */
export interface JobEventReplayHandler {
  startReplay?(): void | Promise<void>;
  replayOneEvent(record: JobEventRecord): void | Promise<void>;
  finalizeReplay?(): void | Promise<void>;
}

export type ReplayFailure =
  /** The log holds something a crash cannot explain (see JobEventStoreCorruptError). */
  | { kind: 'corrupt'; error: JobEventStoreCorruptError }
  /** The log could not be read (I/O error, permissions). */
  | { kind: 'io'; error: ReboundError }
  /** The handler threw while applying an event; `record` is that event. */
  | { kind: 'handler'; error: unknown; record?: JobEventRecord };

export type ReplayResult =
  | { ok: true; events: number; durationMs: number; report: ReplayReport }
  | { ok: false; failure: ReplayFailure; events: number; durationMs: number; report: ReplayReport };

/** A store that can hand out a fresh reader with a report (FileSystemJobEventStore can). */
interface ReportingStore extends JobEventStore {
  openReader(): JobEventLogReader;
}

function isReportingStore(store: JobEventStore): store is ReportingStore {
  return typeof (store as Partial<ReportingStore>).openReader === 'function';
}

function emptyReport(): ReplayReport {
  return {
    directory: '',
    files: [],
    events: 0,
    eventsPerType: { ExecutionJobVertexInitialized: 0, ExecutionVertexFinished: 0, ExecutionVertexReset: 0 },
    bytes: 0,
    discardedBytes: 0,
    tornTails: [],
    staleFiles: [],
    sealedTails: [],
    sealedBytes: 0,
  };
}

/**
 * The JobMaster's handle on its event store (Flink's JobEventManager): start and stop are
 * idempotent; writing or replaying before start is an error; replay never throws but returns
 * success with a report (torn tails, discarded bytes) or a typed failure.
 */
export class JobEventManager {
  private running = false;

  constructor(
    readonly store: JobEventStore,
    private readonly clock: Clock = systemClock,
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    await this.store.start();
    this.running = true;
  }

  /** Stops the store; `clear` deletes the events (when the job reached a globally terminal state). */
  async stop(clear: boolean): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.store.stop(clear);
  }

  isRunning(): boolean {
    return this.running;
  }

  writeEvent(event: JobEvent, cutBlock = false): void {
    this.checkRunning('write an event');
    this.store.writeEvent(event, cutBlock);
  }

  /** Writes and syncs what is buffered now, without waiting for the flush interval. */
  async flush(): Promise<void> {
    const store = this.store as Partial<{ flushNow(): Promise<void> }>;
    await store.flushNow?.();
  }

  /**
   * Seals the log as `replayed` read it (see seals.ts): what a fenced predecessor appends from
   * now on is never history. Resolves once the seal is on disk; a store that cannot write it is
   * disabled (as for any write failure) rather than throwing.
   */
  async seal(replayed: ReplayReport): Promise<void> {
    this.checkRunning('seal the event log');
    const store = this.store as Partial<{ sealHistory(report: ReplayReport): Promise<void> }>;
    await store.sealHistory?.(replayed);
  }

  async hasJobEvents(): Promise<boolean> {
    return !(await this.store.isEmpty());
  }

  /** Replays every event that existed when the store started, in order. */
  async replay(
    handler: JobEventReplayHandler | ((record: JobEventRecord) => void | Promise<void>),
  ): Promise<ReplayResult> {
    this.checkRunning('replay events');
    const h: JobEventReplayHandler = typeof handler === 'function' ? { replayOneEvent: handler } : handler;
    const started = this.clock.now();
    const reader = isReportingStore(this.store) ? this.store.openReader() : undefined;
    const nextBatch = reader
      ? () => reader.nextBatch()
      : async () => {
          const r = await this.store.readEvent();
          return r ? [r] : [];
        };
    const report = (): ReplayReport => reader?.report() ?? emptyReport();
    let events = 0;
    const failed = (failure: ReplayFailure): ReplayResult => ({
      ok: false,
      failure,
      events,
      durationMs: this.clock.now() - started,
      report: report(),
    });
    try {
      try {
        await h.startReplay?.();
      } catch (err) {
        return failed({ kind: 'handler', error: err });
      }
      for (;;) {
        let batch: JobEventRecord[];
        try {
          batch = await nextBatch();
        } catch (err) {
          if (err instanceof JobEventStoreCorruptError) return failed({ kind: 'corrupt', error: err });
          const error =
            err instanceof ReboundError
              ? err
              : new JobEventStoreFailedError(`cannot read job events: ${errorMessage(err)}`, { cause: err });
          return failed({ kind: 'io', error });
        }
        if (batch.length === 0) break;
        for (const record of batch) {
          try {
            // Awaited only when the handler is asynchronous: a microtask per event adds up.
            const done = h.replayOneEvent(record);
            if (done) await done;
          } catch (err) {
            return failed({ kind: 'handler', error: err, record });
          }
          events++;
        }
      }
      try {
        await h.finalizeReplay?.();
      } catch (err) {
        return failed({ kind: 'handler', error: err });
      }
      return { ok: true, events, durationMs: this.clock.now() - started, report: report() };
    } finally {
      await reader?.close().catch(() => {});
    }
  }

  private checkRunning(what: string): void {
    if (!this.running) throw new IllegalStateError(`cannot ${what}: the JobEventManager is not started`);
  }
}
