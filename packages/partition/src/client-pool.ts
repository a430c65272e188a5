import * as grpc from '@grpc/grpc-js';
import {
  CHANNEL_OPTIONS,
  IllegalStateError,
  loadProto,
  type PartitionServiceClient,
  type ShuffleWorkerServiceClient,
} from '@rebound/core';

export interface PartitionClientPoolOptions {
  /** Channel options and interceptors (the cluster secret), on top of CHANNEL_OPTIONS. */
  channelOptions?: grpc.ClientOptions;
  credentials?: grpc.ChannelCredentials;
}

type ClientFactory<C> = (address: string, credentials: grpc.ChannelCredentials, options: grpc.ClientOptions) => C;

/** gRPC clients by peer address, one channel each, reused across calls. */
class ClientPool<C extends grpc.Client> {
  private readonly clients = new Map<string, C>();
  private closed = false;

  constructor(
    private readonly what: string,
    private readonly create: ClientFactory<C>,
    private readonly options: PartitionClientPoolOptions,
    private readonly ownChannelOptions: grpc.ChannelOptions = {},
  ) {}

  get(address: string): C {
    if (this.closed) throw new IllegalStateError(`the ${this.what} client pool is closed`);
    let client = this.clients.get(address);
    if (!client) {
      client = this.create(address, this.options.credentials ?? grpc.credentials.createInsecure(), {
        ...CHANNEL_OPTIONS,
        ...this.ownChannelOptions,
        ...this.options.channelOptions,
      });
      this.clients.set(address, client);
    }
    return client;
  }

  /** Drops the channel to a peer that is gone. */
  evict(address: string): void {
    this.clients.get(address)?.close();
    this.clients.delete(address);
  }

  get size(): number {
    return this.clients.size;
  }

  close(): void {
    this.closed = true;
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

/** PartitionService clients by address (of TaskManagers and of shuffle workers). */
export class PartitionClientPool extends ClientPool<PartitionServiceClient> {
  constructor(options: PartitionClientPoolOptions = {}) {
    super(
      'partition',
      (address, credentials, opts) => new (loadProto().PartitionService)(address, credentials, opts),
      options,
    );
  }
}

/** ShuffleWorkerService clients by shuffle worker address (producers writing partitions). */
export class ShuffleWorkerClientPool extends ClientPool<ShuffleWorkerServiceClient> {
  constructor(options: PartitionClientPoolOptions = {}) {
    super(
      'shuffle worker',
      (address, credentials, opts) => new (loadProto().ShuffleWorkerService)(address, credentials, opts),
      options,
      // A partition stream is never retried (a failed write fails the producer, whose rerun is a
      // new attempt), and the retry buffer would acknowledge writes gRPC has not sent yet, which
      // would hide the workers' backpressure.
      { 'grpc.enable_retries': 0 },
    );
  }
}
