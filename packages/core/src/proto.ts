import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { ConfigError } from './errors.js';
import type { ProtoGrpcType as CommonProto } from './generated/common.js';
import type { ProtoGrpcType as DispatcherProto } from './generated/dispatcher.js';
import type { ProtoGrpcType as EventsProto } from './generated/events.js';
import type { ProtoGrpcType as JobGraphProto } from './generated/jobgraph.js';
import type { ProtoGrpcType as JobMasterProto } from './generated/jobmaster.js';
import type { ProtoGrpcType as PartitionProto } from './generated/partition.js';
import type { ProtoGrpcType as ShuffleProto } from './generated/shuffle.js';
import type { ProtoGrpcType as TaskExecutorProto } from './generated/taskexecutor.js';

/**
 * How messages look in memory (field names as in the .proto, longs as numbers, enums as names,
 * defaults set): the Root's parse and every decode use them. Must match the flags in
 * scripts/gen-proto.sh, or the generated types lie.
 */
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
  throw new ConfigError('cannot find the proto/ directory of Rebound: set REBOUND_PROTO_DIR to it');
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

/** The services of a package: what the processes use of the generated gRPC types. */
export type ServicesOf<T> = { [K in keyof T as T[K] extends { service: unknown } ? K : never]: T[K] };
export type ReboundServices = ServicesOf<ReboundProto>;

/**
 * grpc-js service constructors for every service of `namespace`, with the serializers
 * @grpc/proto-loader would make (fromObject + encode; decode + toObject under the loader's
 * options, so the generated `X__Output` types hold). Built straight from the protobufjs Root that
 * persistence uses: proto-loader first turns every message into descriptor objects for
 * reflection, which no process serves; that was a tenth of a `rebound status`.
 */
export function grpcServices(namespace: protobuf.Namespace): Record<string, grpc.ServiceClientConstructor> {
  const out: Record<string, grpc.ServiceClientConstructor> = {};
  for (const service of namespace.nestedArray) {
    if (!(service instanceof protobuf.Service)) continue;
    const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
    for (const method of service.methodsArray) {
      method.resolve();
      const request = method.resolvedRequestType!;
      const response = method.resolvedResponseType!;
      definition[method.name] = {
        path: `/${service.fullName.slice(1)}/${method.name}`,
        requestStream: !!method.requestStream,
        responseStream: !!method.responseStream,
        requestSerialize: serializer(request),
        requestDeserialize: deserializer(request),
        responseSerialize: serializer(response),
        responseDeserialize: deserializer(response),
        originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
      };
    }
    out[service.name] = grpc.makeGenericClientConstructor(definition, service.name);
  }
  return out;
}

function serializer(type: protobuf.Type): (value: object) => Buffer {
  // protobufjs writes a Buffer under Node.
  return (value) => type.encode(type.fromObject(value as Record<string, unknown>)).finish() as Buffer;
}

function deserializer(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), PROTO_LOADER_OPTIONS);
}

let services: ReboundServices | undefined;

/** The typed gRPC service constructors (and, through `.service`, their definitions). */
export function loadProto(): ReboundServices {
  services ??= grpcServices(protobufRoot().lookup('rebound.v1') as protobuf.Namespace) as unknown as ReboundServices;
  return services;
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
    r.loadSync(PROTO_FILES, { keepCase: PROTO_LOADER_OPTIONS.keepCase });
    r.resolveAll();
    root = r;
  }
  return root;
}

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
  return type.toObject(type.decode(bytes), PROTO_LOADER_OPTIONS) as T;
}
