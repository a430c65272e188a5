import type { MessageTypeDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType as EventsProto } from './generated/events.js';

/**
 * The kinds of event the JobMaster records so that a later leader can rebuild a job's progress
 * (FLIP-383), declared once: the event store's codec (record type byte, payload message of
 * proto/rebound/v1/events.proto, TypeScript types) and the `debug.crash.*-event` options derive
 * from this table.
 */
export const JOB_EVENT_TYPES = {
  // Record type bytes: the same ids as Flink's JobEvents registry.
  ExecutionJobVertexInitialized: { id: 3, message: 'ExecutionJobVertexInitializedEvent' },
  ExecutionVertexFinished: { id: 1, message: 'ExecutionVertexFinishedEvent' },
  ExecutionVertexReset: { id: 2, message: 'ExecutionVertexResetEvent' },
} as const satisfies Readonly<Record<string, { readonly id: number; readonly message: keyof EventMessages }>>;

export type JobEventType = keyof typeof JOB_EVENT_TYPES;

export const JOB_EVENT_TYPE_NAMES = Object.keys(JOB_EVENT_TYPES) as JobEventType[];

type EventMessages = EventsProto['rebound']['v1'];
type PayloadDefinition<T extends JobEventType> = EventMessages[(typeof JOB_EVENT_TYPES)[T]['message']];

/** The payload of an event of type T as written (optional fields). */
export type JobEventPayload<T extends JobEventType> =
  PayloadDefinition<T> extends MessageTypeDefinition<infer In, infer _Out> ? In : never;

/** The payload of an event of type T as decoded (every field present, defaults filled). */
export type DecodedJobEventPayload<T extends JobEventType> =
  PayloadDefinition<T> extends MessageTypeDefinition<infer _In, infer Out> ? Out : never;
