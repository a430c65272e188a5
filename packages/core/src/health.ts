import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { ProtoGrpcType as HealthProto } from './generated/health.js';
import { CHANNEL_OPTIONS, unary } from './grpc.js';
import { grpcServices, PROTO_LOADER_OPTIONS, PROTO_ROOT, type ServicesOf } from './proto.js';
import type {
  HealthCheckRequest__Output,
  HealthCheckResponse,
  HealthCheckResponse__Output,
  HealthClient,
  HealthHandlers,
} from './types.js';

/**
 * The standard gRPC health service (grpc.health.v1.Health) that every Rebound daemon serves, so
 * container healthchecks and stock probes can ask whether a process is ready without knowing
 * Rebound's own RPCs.
 */
export const HEALTH_PROTO_FILE = 'grpc/health/v1/health.proto';

export type ServingStatus = HealthCheckResponse__Output['status'];

/** The service names the daemons report. */
export const HealthServices = {
  /** The whole server: set once the process serves its RPCs, until it shuts down. */
  server: '',
  /** SERVING only on the JobMaster that currently leads. */
  dispatcher: 'rebound.v1.Dispatcher',
  /** SERVING while the TaskManager is registered with a leader. */
  taskExecutor: 'rebound.v1.TaskExecutorGateway',
  /** SERVING while the shuffle worker is registered with a leader. */
  shuffleWorker: 'rebound.v1.ShuffleWorkerService',
} as const;

export type HealthPackage = ServicesOf<HealthProto['grpc']['health']['v1']>;

let healthPackage: HealthPackage | undefined;

export function loadHealthProto(): HealthPackage {
  if (!healthPackage) {
    const root = new protobuf.Root();
    root.loadSync(join(PROTO_ROOT, HEALTH_PROTO_FILE), { keepCase: PROTO_LOADER_OPTIONS.keepCase });
    root.resolveAll();
    healthPackage = grpcServices(root.lookup('grpc.health.v1') as protobuf.Namespace) as unknown as HealthPackage;
  }
  return healthPackage;
}

/** The default of rpc.health.watch.max-streams, for managers built without a configuration. */
export const DEFAULT_MAX_WATCH_STREAMS = 64;

type WatchCall = grpc.ServerWritableStream<HealthCheckRequest__Output, HealthCheckResponse>;

/**
 * The statuses one server reports, and the Check/Watch handlers that report them. After
 * shutdown() every service reads NOT_SERVING and nothing can set it back: a closing daemon must
 * stop looking ready before it stops answering.
 */
export class HealthStatusManager {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<WatchCall>>();
  private openWatches = 0;
  private closed = false;
  private readonly maxWatchStreams: number;

  /**
   * `maxWatchStreams` (rpc.health.watch.max-streams) bounds the open Watch streams: the health
   * service answers without the cluster secret, so anyone could otherwise hold streams open
   * without limit.
   */
  constructor(
    initial: Readonly<Record<string, ServingStatus>> = {},
    options: { readonly maxWatchStreams?: number } = {},
  ) {
    for (const [service, status] of Object.entries(initial)) this.statuses.set(service, status);
    this.maxWatchStreams = options.maxWatchStreams ?? DEFAULT_MAX_WATCH_STREAMS;
  }

  /** Watch streams open now. */
  get watchStreams(): number {
    return this.openWatches;
  }

  setStatus(service: string, status: ServingStatus): void {
    if (this.closed || this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const call of this.watchers.get(service) ?? []) call.write({ status });
  }

  getStatus(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Marks every service NOT_SERVING and ends open Watch streams (they would hold up a graceful server shutdown). */
  shutdown(): void {
    for (const service of this.statuses.keys()) this.setStatus(service, 'NOT_SERVING');
    this.closed = true;
    for (const calls of this.watchers.values()) for (const call of calls) call.end();
    this.watchers.clear();
    this.openWatches = 0;
  }

  handlers(): HealthHandlers {
    return {
      Check: (call, callback) => {
        const status = this.statuses.get(call.request.service);
        if (status === undefined) {
          callback({ code: grpc.status.NOT_FOUND, details: `unknown service '${call.request.service}'` });
          return;
        }
        callback(null, { status });
      },
      Watch: (call) => {
        const service = call.request.service;
        if (!this.closed && this.openWatches >= this.maxWatchStreams) {
          call.emit('error', {
            code: grpc.status.RESOURCE_EXHAUSTED,
            details: `health Watch refused: ${this.maxWatchStreams} streams are open already (rpc.health.watch.max-streams)`,
          });
          return;
        }
        call.write({ status: this.statuses.get(service) ?? 'SERVICE_UNKNOWN' });
        if (this.closed) {
          call.end();
          return;
        }
        let calls = this.watchers.get(service);
        if (!calls) this.watchers.set(service, (calls = new Set()));
        calls.add(call);
        this.openWatches++;
        call.on('cancelled', () => {
          if (calls.delete(call)) this.openWatches--;
        });
      },
    };
  }
}

/**
 * Asks the health service at `address` for the status of `service`, with a deadline. Rejects with
 * a ReboundError when nothing answers in time (UNAVAILABLE) or the server does not know the
 * service (INTERNAL, carrying the server's "unknown service" message).
 */
export async function checkHealth(address: string, service: string, timeoutMs: number): Promise<ServingStatus> {
  const client: HealthClient = new (loadHealthProto().Health)(
    address,
    grpc.credentials.createInsecure(),
    CHANNEL_OPTIONS,
  );
  try {
    const response = await unary(client, client.Check, { service }, timeoutMs);
    return response.status;
  } finally {
    client.close();
  }
}
