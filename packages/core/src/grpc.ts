import * as grpc from '@grpc/grpc-js';
import {
  AddressInUseError,
  fromServiceError,
  InternalError,
  ReboundError,
  toServiceError,
  UnavailableError,
} from './errors.js';
import type { Logger } from './logger.js';

/** Options every channel of the cluster uses. Keepalive finds dead peers without waiting for TCP. */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.max_receive_message_length': 256 * 1024 * 1024,
  'grpc.max_send_message_length': 256 * 1024 * 1024,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
};

/**
 * A generated client method. Inference binds to the last overload, `(argument, callback)`;
 * `unary` calls the full `(argument, metadata, options, callback)` form at run time.
 */
type UnaryMethod<Req, Res> = (argument: Req, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;
type FullUnaryMethod<Req, Res> = (
  argument: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/**
 * Calls a unary method with a deadline and turns failures into ReboundErrors carrying the
 * server's stable code.
 */
export function unary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  timeoutMs: number,
  /** Cancels the call (it rejects with CANCELLED) before its deadline. */
  signal?: AbortSignal,
): Promise<Res> {
  const full = method as unknown as FullUnaryMethod<Req, Res>;
  return new Promise((resolve, reject) => {
    const onAbort = (): void => call.cancel();
    const call = full.call(client, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, value) => {
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(fromServiceError(err));
      else if (value === undefined) reject(new InternalError('empty response'));
      else resolve(value);
    });
    if (signal?.aborted) call.cancel();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wraps an async handler as a grpc-js unary handler; thrown ReboundErrors become statuses with
 * their code in metadata. Anything else is a bug: it becomes INTERNAL and one error line naming
 * the method (never the request or its metadata, which may carry job code or the secret).
 */
export function handleUnary<Req, Res>(
  fn: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
  logger: Logger,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request, call))
      .then(
        (res) => callback(null, res),
        (err: unknown) => {
          if (!(err instanceof ReboundError)) logger.error({ method: call.getPath(), err }, 'gRPC handler failed');
          callback(toServiceError(err));
        },
      );
  };
}

/** Binds a server; a port in use becomes a clear ADDRESS_IN_USE error. Returns the bound port. */
export function bindServer(
  server: grpc.Server,
  host: string,
  port: number,
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, credentials, (err, bound) => {
      if (err) {
        const inUse = /EADDRINUSE|address already in use|No address added/i.test(err.message);
        reject(
          inUse
            ? new AddressInUseError(
                `port ${port} on ${host} is already in use; choose another port or use 0 for any free port`,
              )
            : new UnavailableError(`cannot listen on ${host}:${port}: ${err.message}`),
        );
      } else {
        resolve(bound);
      }
    });
  });
}

export function shutdownServer(server: grpc.Server, graceMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
