import * as grpc from '@grpc/grpc-js';
import { AUTH_METADATA_KEY, ErrorCode, fromServiceError, loadProto } from '@rebound/core';
import type { ClusterSecurity, ExecutionAttemptId } from '@rebound/core';

/**
 * The credentials of the `malformed-credentials` fault: values no client of the cluster sends,
 * in gRPC metadata and in HTTP headers. Each must count as no credential: refused as
 * unauthenticated (or, for a header too large to read, refused by the HTTP layer), and never
 * answered, never a 5xx, never a crash or a hang of the server.
 */

/** What a malformed credential is built from: the cluster's own secret (never sent whole). */
export interface MalformedInputs {
  readonly secret: string;
}

export interface MalformedGrpc {
  readonly name: string;
  /** Metadata entries of the call, in order (a key twice is two entries). */
  readonly metadata: (i: MalformedInputs) => readonly (readonly [string, string | Buffer])[];
}

export const MALFORMED_GRPC: readonly MalformedGrpc[] = [
  { name: 'an empty secret', metadata: () => [[AUTH_METADATA_KEY, '']] },
  { name: 'the secret but its last character', metadata: (i) => [[AUTH_METADATA_KEY, i.secret.slice(0, -1)]] },
  { name: 'the secret and a trailing space', metadata: (i) => [[AUTH_METADATA_KEY, `${i.secret} `]] },
  { name: 'the secret in upper case', metadata: (i) => [[AUTH_METADATA_KEY, i.secret.toUpperCase()]] },
  { name: 'a secret of 12 KiB', metadata: () => [[AUTH_METADATA_KEY, 'f'.repeat(12 * 1024)]] },
  {
    name: 'two wrong secrets in one call',
    metadata: (i) => [
      [AUTH_METADATA_KEY, 'x'.repeat(i.secret.length)],
      [AUTH_METADATA_KEY, 'y'.repeat(i.secret.length)],
    ],
  },
  { name: 'a binary secret', metadata: () => [[`${AUTH_METADATA_KEY}-bin`, Buffer.from([0, 255, 10, 13])]] },
  { name: 'the secret as HTTP authorization', metadata: (i) => [['authorization', `Bearer ${i.secret}`]] },
];

export interface MalformedHttp {
  readonly name: string;
  /** Headers of a GET of a REST path that needs credentials; `query` is appended to it. */
  readonly headers: (i: MalformedInputs) => Readonly<Record<string, string>>;
  readonly query?: string;
}

export const MALFORMED_HTTP: readonly MalformedHttp[] = [
  { name: 'Bearer without a token', headers: () => ({ authorization: 'Bearer' }) },
  { name: 'Bearer with the secret and one more character', headers: (i) => ({ authorization: `Bearer ${i.secret}x` }) },
  { name: 'Basic credentials', headers: () => ({ authorization: 'Basic cmVib3VuZDpyZWJvdW5k' }) },
  { name: 'an Authorization of 20 KiB', headers: () => ({ authorization: `Bearer ${'a'.repeat(20 * 1024)}` }) },
  { name: 'a cookie with a broken escape', headers: () => ({ cookie: 'rebound_session_000000000000=%E0%A4%A' }) },
  { name: 'a cookie of separators only', headers: () => ({ cookie: ';;; = ;=;' }) },
  { name: 'a cookie of 8 KiB', headers: () => ({ cookie: `rebound_session_${'b'.repeat(8 * 1024)}=1` }) },
  { name: 'a token with a broken escape', headers: () => ({}), query: '?token=%ZZ%' },
  { name: 'the secret as gRPC metadata', headers: (i) => ({ [AUTH_METADATA_KEY]: i.secret }) },
];

export type MalformedOutcome =
  | { readonly outcome: 'refused'; readonly detail: string }
  | { readonly outcome: 'accepted'; readonly detail: string }
  /** The server failed or did not answer in time: a finding, unless the target was gone. */
  | { readonly outcome: 'broken'; readonly detail: string }
  | { readonly outcome: 'unreachable'; readonly detail: string };

const CALL_TIMEOUT_MS = 10_000;

interface MethodDef {
  readonly path: string;
  readonly requestSerialize: (value: object) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => unknown;
}

/**
 * One gRPC call with `m`'s metadata and nothing else: ListJobs to the leader's Dispatcher, or a
 * CancelTask of a running execution to a TaskManager (accepted, it would cancel the task).
 */
export async function sendMalformedGrpc(
  m: MalformedGrpc,
  inputs: MalformedInputs,
  target:
    | { readonly to: 'leader'; readonly address: string }
    | {
        readonly to: 'taskmanager';
        readonly address: string;
        readonly epoch: number;
        readonly execution: ExecutionAttemptId;
      },
  tls: ClusterSecurity,
): Promise<MalformedOutcome> {
  const proto = loadProto();
  const ctor = target.to === 'leader' ? proto.Dispatcher : proto.TaskExecutorGateway;
  const method = (ctor.service as unknown as Record<string, MethodDef>)[
    target.to === 'leader' ? 'ListJobs' : 'CancelTask'
  ]!;
  const request = target.to === 'leader' ? {} : { epoch: target.epoch, execution: target.execution };
  // The channel of the cluster's TLS settings, without the interceptor that adds the secret.
  const client = new ctor(target.address, tls.channelCredentials());
  const metadata = new grpc.Metadata();
  try {
    for (const [k, v] of m.metadata(inputs)) metadata.add(k, v);
  } catch (err) {
    client.close();
    // grpc-js refuses to send it: nothing reached the server.
    return { outcome: 'refused', detail: `not sendable: ${(err as Error).message}` };
  }
  try {
    return await new Promise<MalformedOutcome>((resolve) => {
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        metadata,
        { deadline: Date.now() + CALL_TIMEOUT_MS },
        (err) => {
          if (!err) return resolve({ outcome: 'accepted', detail: 'answered' });
          const e = fromServiceError(err);
          if (e.code === ErrorCode.UNAUTHENTICATED) return resolve({ outcome: 'refused', detail: e.message });
          if (e.code === ErrorCode.UNAVAILABLE) return resolve({ outcome: 'unreachable', detail: e.message });
          resolve({ outcome: 'broken', detail: `${e.code}: ${e.message}` });
        },
      );
    });
  } finally {
    client.close();
  }
}

/** One GET of `path` on the leader's REST with `m`'s headers only. */
export async function sendMalformedHttp(
  m: MalformedHttp,
  inputs: MalformedInputs,
  restUrl: string,
  path: string,
): Promise<MalformedOutcome> {
  let res: Response;
  try {
    res = await fetch(`${restUrl}${path}${m.query ?? ''}`, {
      headers: m.headers(inputs),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    await res.arrayBuffer();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    if (cause === 'ECONNREFUSED') return { outcome: 'unreachable', detail: String(cause) };
    // undici will not send some values at all: nothing reached the server.
    if (err instanceof TypeError && cause === undefined)
      return { outcome: 'refused', detail: `not sendable: ${err.message}` };
    return {
      outcome: 'broken',
      detail: `${(err as Error).name}: ${(err as Error).message}${cause ? ` (${cause})` : ''}`,
    };
  }
  // 401 is the answer; 400 and 431 are the HTTP layer refusing what it cannot read.
  if ([400, 401, 431].includes(res.status)) return { outcome: 'refused', detail: String(res.status) };
  if (res.status < 400) return { outcome: 'accepted', detail: String(res.status) };
  return { outcome: 'broken', detail: `HTTP ${res.status}` };
}
