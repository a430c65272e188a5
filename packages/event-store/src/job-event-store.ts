import type { JobEvent, JobEventRecord } from './job-event.js';

/**
 * The durable log of a job's events (Flink's JobEventStore). One instance belongs to one
 * JobMaster attempt: it reads what earlier attempts wrote and appends to new files of its own.
 */
export interface JobEventStore extends AsyncIterable<JobEventRecord> {
  /** Lists the existing log (the replay set) and makes the store writable. */
  start(): Promise<void>;
  /**
   * Enqueues an event; never blocks and never throws for I/O problems (those disable the store,
   * see FileSystemJobEventStore.status). `cutBlock` closes the current file after this event,
   * flushing it now; the next event starts a new file.
   */
  writeEvent(event: JobEvent, cutBlock?: boolean): void;
  /** The next event of the replay set, or null after the last one. */
  readEvent(): Promise<JobEventRecord | null>;
  /** True when the job has no event files at all. */
  isEmpty(): Promise<boolean>;
  /** Flushes (unless clearing) and closes; `clear` deletes the job's event directory. */
  stop(clear: boolean): Promise<void>;
}
