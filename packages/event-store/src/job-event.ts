import {
  JOB_EVENT_TYPES,
  type DecodedJobEventPayload,
  type JobEventPayload,
  type JobEventType,
  JOB_EVENT_TYPE_NAMES,
} from '@rebound/core';
import { messageCodec, type MessageCodec } from './proto-codec.js';

// Declared once in @rebound/core (the `debug.crash.*-event` options list them too).
export { JOB_EVENT_TYPES, JOB_EVENT_TYPE_NAMES, type JobEventType };

/**
 * What the JobMaster records so that a later leader can rebuild the job's progress (FLIP-383).
 * The payload of each event is a proto message of proto/rebound/v1/events.proto.
 */
export type JobEvent = { [T in JobEventType]: { type: T; event: JobEventPayload<T> } }[JobEventType];

/** A job event as decoded from the log: every field present, defaults filled. */
export type DecodedJobEvent = { [T in JobEventType]: { type: T; event: DecodedJobEventPayload<T> } }[JobEventType];

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
