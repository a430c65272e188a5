import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { ProtoGrpcType as CommonProto } from './generated/common.js';
import type { ProtoGrpcType as DispatcherProto } from './generated/dispatcher.js';
import type { ProtoGrpcType as EventsProto } from './generated/events.js';
import type { ProtoGrpcType as JobGraphProto } from './generated/jobgraph.js';
import type { ProtoGrpcType as JobMasterProto } from './generated/jobmaster.js';
import type { ProtoGrpcType as PartitionProto } from './generated/partition.js';
import type { ProtoGrpcType as ShuffleProto } from './generated/shuffle.js';
import type { ProtoGrpcType as TaskExecutorProto } from './generated/taskexecutor.js';

/** Must match the flags in scripts/gen-proto.sh, or the generated types lie. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

export const PROTO_FILES = [
  'rebound/v1/common.proto',
  'rebound/v1/jobgraph.proto',
  'rebound/v1/dispatcher.proto',
  'rebound/v1/jobmaster.proto',
  'rebound/v1/taskexecutor.proto',
  'rebound/v1/partition.proto',
  'rebound/v1/shuffle.proto',
  'rebound/v1/events.proto',
];

function findProtoRoot(): string {
  const fromEnv = process.env.REBOUND_PROTO_DIR;
  if (fromEnv) return fromEnv;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, 'rebound/v1/common.proto'))) return candidate;
    dir = resolve(dir, '..');
  }
  throw new Error('cannot find the proto/ directory of Rebound');
}

export const PROTO_ROOT = findProtoRoot();

type AllProtos = CommonProto &
  DispatcherProto &
  EventsProto &
  JobGraphProto &
  JobMasterProto &
  PartitionProto &
  ShuffleProto &
  TaskExecutorProto;
export type ReboundProto = AllProtos['rebound']['v1'];

let grpcObject: ReboundProto | undefined;

/** The typed gRPC package object: service constructors and definitions. */
export function loadProto(): ReboundProto {
  if (!grpcObject) {
    const def = protoLoader.loadSync(PROTO_FILES, { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
    const pkg = grpc.loadPackageDefinition(def) as unknown as AllProtos;
    grpcObject = pkg.rebound.v1;
  }
  return grpcObject;
}

let root: protobuf.Root | undefined;

/**
 * The one protobufjs Root of proto/: `encodeMessage`/`decodeMessage` and the event store's
 * codec, which plans its encoders from the same reflection.
 */
export function protobufRoot(): protobuf.Root {
  if (!root) {
    const r = new protobuf.Root();
    r.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(PROTO_ROOT, target));
    r.loadSync(PROTO_FILES, { keepCase: true });
    r.resolveAll();
    root = r;
  }
  return root;
}

const CONVERSION = { longs: Number, enums: String, defaults: true, oneofs: true } as const;

/**
 * Binary encoding of a proto message for persistence (JobGraphStore, JobEventStore). Uses the
 * same field conventions as the gRPC loader, so the generated `X` / `X__Output` types apply.
 */
export function encodeMessage<T extends object>(typeName: string, message: T): Uint8Array {
  const type = protobufRoot().lookupType(`rebound.v1.${typeName}`);
  return type.encode(type.fromObject(message as Record<string, unknown>)).finish();
}

export function decodeMessage<T>(typeName: string, bytes: Uint8Array): T {
  const type = protobufRoot().lookupType(`rebound.v1.${typeName}`);
  return type.toObject(type.decode(bytes), CONVERSION) as T;
}
