import type {
  ExecutionJobVertexInitializedEvent,
  ExecutionJobVertexInitializedEvent__Output,
  ExecutionVertexFinishedEvent,
  ExecutionVertexFinishedEvent__Output,
  ExecutionVertexResetEvent,
  ExecutionVertexResetEvent__Output,
} from '@rebound/core';
import { messageCodec, type MessageCodec } from './proto-codec.js';

/**
 * What the JobMaster records so that a later leader can rebuild the job's progress (FLIP-383).
 * The payload of each event is a proto message of proto/rebound/v1/events.proto.
 */
export type JobEvent =
  | { type: 'ExecutionJobVertexInitialized'; event: ExecutionJobVertexInitializedEvent }
  | { type: 'ExecutionVertexFinished'; event: ExecutionVertexFinishedEvent }
  | { type: 'ExecutionVertexReset'; event: ExecutionVertexResetEvent };

/** A job event as decoded from the log: every field present, defaults filled. */
export type DecodedJobEvent =
  | { type: 'ExecutionJobVertexInitialized'; event: ExecutionJobVertexInitializedEvent__Output }
  | { type: 'ExecutionVertexFinished'; event: ExecutionVertexFinishedEvent__Output }
  | { type: 'ExecutionVertexReset'; event: ExecutionVertexResetEvent__Output };

export type JobEventType = JobEvent['type'];

/** Where a replayed event was read from. */
export interface JobEventRecordPosition {
  /** File name inside the job-events directory, e.g. `events.3`. */
  file: string;
  /** Byte offset of the record's frame in that file. */
  offset: number;
  /** Clock time of `writeEvent` on the JobMaster that recorded it. */
  writtenAtMs: number;
  /** Fencing epoch of that JobMaster (from the file header). */
  epoch: number;
}

/** A replayed event: the decoded event and where it came from. */
export type JobEventRecord = DecodedJobEvent & JobEventRecordPosition;

interface EventTypeSpec {
  /** Record type byte; the same ids as Flink's JobEvents registry. */
  readonly id: number;
  readonly message: string;
}

export const JOB_EVENT_TYPES: Readonly<Record<JobEventType, EventTypeSpec>> = {
  ExecutionJobVertexInitialized: { id: 3, message: 'ExecutionJobVertexInitializedEvent' },
  ExecutionVertexFinished: { id: 1, message: 'ExecutionVertexFinishedEvent' },
  ExecutionVertexReset: { id: 2, message: 'ExecutionVertexResetEvent' },
};

export const JOB_EVENT_TYPE_NAMES = Object.keys(JOB_EVENT_TYPES) as JobEventType[];

const TYPE_BY_ID: (JobEventType | undefined)[] = [];
for (const name of JOB_EVENT_TYPE_NAMES) TYPE_BY_ID[JOB_EVENT_TYPES[name].id] = name;

export function jobEventTypeOfId(id: number): JobEventType | undefined {
  return TYPE_BY_ID[id];
}

type AnyCodec = MessageCodec<object, unknown>;

const fastCodecs: Partial<Record<JobEventType, AnyCodec>> = {};
const genericCodecs: Partial<Record<JobEventType, AnyCodec>> = {};

/** The payload codec of an event type (`generic`: the protobufjs reference path). */
export function jobEventCodec(type: JobEventType, generic = false): AnyCodec {
  const cache = generic ? genericCodecs : fastCodecs;
  return (cache[type] ??= messageCodec<object, unknown>(JOB_EVENT_TYPES[type].message, generic));
}
