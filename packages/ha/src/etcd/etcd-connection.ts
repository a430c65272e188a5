import { createRequire } from 'node:module';
import type { Etcd3, IKeyValue, Lease } from 'etcd3';
import { ConfigError, type Configuration, ErrorCode, errorMessage, ReboundError } from '@rebound/core';
import { type EtcdCredentials, etcdClientOptions, etcdCredentialsFrom, etcdRefusal } from './etcd-credentials.js';

/** etcd did not answer in time, or refused the connection. */
export class EtcdUnavailableError extends ReboundError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.UNAVAILABLE, message, options);
  }
}

/** The etcd keys of one cluster: everything under `/<cluster-id>/`. */
export class EtcdKeys {
  constructor(readonly clusterId: string) {}
  get root(): string {
    return `/${this.clusterId}/`;
  }
  get leader(): string {
    return `/${this.clusterId}/leader`;
  }
  get endpointsPrefix(): string {
    return `/${this.clusterId}/endpoints/`;
  }
  endpoint(id: string): string {
    return `${this.endpointsPrefix}${id}`;
  }
  get jobsPrefix(): string {
    return `/${this.clusterId}/jobs/`;
  }
  jobPrefix(jobId: string): string {
    return `/${this.clusterId}/jobs/${jobId}/`;
  }
  jobGraph(jobId: string): string {
    return `${this.jobPrefix(jobId)}graph`;
  }
  jobStatus(jobId: string): string {
    return `${this.jobPrefix(jobId)}status`;
  }
  attachmentsPrefix(jobId: string): string {
    return `${this.jobPrefix(jobId)}attachments/`;
  }
  attachment(jobId: string, name: string): string {
    return `${this.attachmentsPrefix(jobId)}${name}`;
  }
}

export function parseEndpoints(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim().replace(/\/$/, ''))
    .filter((s) => s.length > 0);
}

/** `range_end` for a prefix: the prefix with its last byte incremented (etcd's convention). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  const end = Buffer.from(b);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/**
 * One etcd client of a process, with the cluster's key namespace and a deadline on every call.
 * Errors name the endpoints, the key and the configuration key to fix, in one line.
 */
export class EtcdConnection {
  readonly client: Etcd3;
  readonly endpoints: readonly string[];
  readonly keys: EtcdKeys;
  readonly timeoutMs: number;
  private readonly credentials: EtcdCredentials;
  private closed = false;

  constructor(config: Configuration) {
    this.endpoints = parseEndpoints(config.getString('high-availability.etcd.endpoints'));
    if (this.endpoints.length === 0) {
      throw new ConfigError(
        'high-availability.type is etcd but high-availability.etcd.endpoints is empty; set it to the etcd client URLs, e.g. -D high-availability.etcd.endpoints=http://127.0.0.1:2379',
      );
    }
    // Read before the client exists: a missing password or CA file is one line naming its key.
    this.credentials = etcdCredentialsFrom(config, this.endpoints);
    this.keys = new EtcdKeys(config.getString('high-availability.cluster-id'));
    this.timeoutMs = config.getDurationMs('high-availability.etcd.request-timeout');
    const timeoutMs = this.timeoutMs;
    // Loaded here, not at import: etcd3 and its gRPC stubs cost every process a few hundred ms of
    // CPU at start, and only clusters on etcd need them.
    const { Etcd3: Client } = createRequire(import.meta.url)('etcd3') as typeof import('etcd3');
    this.client = new Client({
      hosts: [...this.endpoints],
      ...etcdClientOptions(this.credentials),
      dialTimeout: timeoutMs,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeoutMs }),
    });
  }

  describe(): string {
    return `etcd ${this.endpoints.join(',')} (cluster-id ${this.keys.clusterId})`;
  }

  /** gRPC call options with this connection's deadline. */
  callOptions(): { deadline: number } {
    return { deadline: Date.now() + this.timeoutMs };
  }

  /**
   * Runs one etcd operation under the request timeout. A hung or refused call becomes an
   * EtcdUnavailableError naming what was attempted; a ReboundError from `op` passes through.
   */
  async call<T>(what: string, key: string, op: () => Promise<T>): Promise<T> {
    if (this.closed) throw new EtcdUnavailableError(`${what} ${key}: the etcd client of this process is closed`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      return await Promise.race([op(), timeout]);
    } catch (err) {
      if (err instanceof ReboundError) throw err;
      // A wrong password or an unknown CA is not "etcd is down": say which key to fix.
      const refused = etcdRefusal(err, this.endpoints, this.credentials);
      if (refused) throw refused;
      // A TLS handshake that fails on an unknown CA reads as "No connection established" too,
      // with no reason grpc passes on: name the CA key whether it is missing or set.
      const https = this.endpoints.some((e) => e.startsWith('https://'));
      const tlsHint = !https
        ? ''
        : this.credentials.tls?.ca
          ? ", or high-availability.etcd.tls.ca-file if it is not the CA that signed etcd's certificate"
          : ', and set high-availability.etcd.tls.ca-file if etcd has a certificate of a private CA';
      throw new EtcdUnavailableError(
        `${what} ${key} at etcd ${this.endpoints.join(',')} failed (${errorMessage(err).split('\n')[0]}); check that etcd runs there or fix high-availability.etcd.endpoints${tlsHint}`,
        { cause: err },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The key's current value and metadata, or undefined. */
  async get(key: string): Promise<{ kv: IKeyValue | undefined; revision: number }> {
    const res = await this.call('reading', key, () =>
      this.client.kv.range({ key: Buffer.from(key) }, this.callOptions()),
    );
    return { kv: res.kvs[0], revision: Number(res.header.revision) };
  }

  /** Every key (with values unless keysOnly) under `prefix`, in key order. */
  async getPrefix(prefix: string, keysOnly = false): Promise<IKeyValue[]> {
    const res = await this.call('listing', `${prefix}*`, () =>
      this.client.kv.range(
        { key: Buffer.from(prefix), range_end: prefixEnd(prefix), keys_only: keysOnly },
        this.callOptions(),
      ),
    );
    return res.kvs;
  }

  lease(ttlSeconds: number): Lease {
    return this.client.lease(ttlSeconds, { autoKeepAlive: false });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }
}
