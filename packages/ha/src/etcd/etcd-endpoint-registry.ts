import type { Lease } from 'etcd3';
import {
  type EndpointRegistry,
  type ProcessEndpoint,
  type ProcessEndpointInput,
  checkEndpointId,
  completeEndpoint,
  encodeEndpoint,
  parseEndpoint,
} from '../endpoints.js';
import type { EtcdConnection } from './etcd-connection.js';

/**
 * Endpoints in etcd under `/<cluster-id>/endpoints/<id>`, each put with a lease this process keeps
 * alive (etcd3's keep-alive, every third of the TTL). A process that dies, or is cut off from etcd,
 * loses its record one lease timeout later, so a listed endpoint is one whose process was heard
 * from within `high-availability.lease.timeout`: liveness that works across hosts, which the
 * file backend's pid check cannot give.
 */
export class EtcdEndpointRegistry implements EndpointRegistry {
  /** The records this process published, put again under a fresh lease when etcd drops the lease. */
  private readonly own = new Map<string, ProcessEndpoint>();
  private lease: Lease | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly conn: EtcdConnection,
    private readonly ttlMs: number,
    private readonly retryIntervalMs: number,
  ) {}

  async publish(input: ProcessEndpointInput): Promise<void> {
    const ep = completeEndpoint(input);
    this.closed = false;
    this.own.set(ep.id, ep);
    const lease = this.currentLease();
    await this.conn.call('publishing the endpoint', this.conn.keys.endpoint(ep.id), () =>
      lease.put(this.conn.keys.endpoint(ep.id)).value(encodeEndpoint(ep)).exec(),
    );
  }

  async withdraw(id: string): Promise<void> {
    if (!this.own.delete(id)) return;
    await this.conn.call('withdrawing the endpoint', this.conn.keys.endpoint(id), () =>
      this.conn.client.delete().key(this.conn.keys.endpoint(id)).exec(),
    );
    if (this.own.size === 0) await this.close();
  }

  async list(): Promise<ProcessEndpoint[]> {
    const kvs = await this.conn.getPrefix(this.conn.keys.endpointsPrefix);
    return kvs
      .flatMap((kv) => parseEndpoint(kv.value.toString('utf8')) ?? [])
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async read(id: string): Promise<ProcessEndpoint | undefined> {
    checkEndpointId(id);
    const { kv } = await this.conn.get(this.conn.keys.endpoint(id));
    return kv ? parseEndpoint(kv.value.toString('utf8')) : undefined;
  }

  /** A record exists only while its process keeps the lease alive. */
  alive(): boolean {
    return true;
  }

  /** Revokes the lease (the records go at once) and stops re-publishing. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const lease = this.lease;
    this.lease = undefined;
    if (lease)
      await this.conn
        .call('revoking the endpoint lease of', this.conn.keys.endpointsPrefix, () => lease.revoke())
        .catch(() => undefined);
  }

  private currentLease(): Lease {
    if (this.lease) return this.lease;
    const lease = this.conn.client.lease(Math.max(1, Math.ceil(this.ttlMs / 1000)));
    lease.on('lost', () => {
      if (this.lease !== lease) return;
      this.lease = undefined;
      this.scheduleRepublish();
    });
    this.lease = lease;
    return lease;
  }

  private scheduleRepublish(): void {
    if (this.closed || this.own.size === 0) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      void Promise.all([...this.own.values()].map((ep) => this.publish(ep))).catch(() => {
        this.lease?.release();
        this.lease = undefined;
        this.scheduleRepublish();
      });
    }, this.retryIntervalMs);
    this.retryTimer.unref();
  }
}
