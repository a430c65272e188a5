import type { ServerResponse } from 'node:http';
import type { Logger } from '@rebound/core';

/** What one tick of the stream computes; only the documents some client needs. */
export interface StreamSnapshotSource {
  /** Documents for every client, by event name (e.g. `cluster`, `jobs`). */
  common(): Promise<Record<string, unknown>>;
  /** Documents about one job, by event name (e.g. `job`, `recoveries`). */
  job(jobId: string): Promise<Record<string, unknown>>;
  /** False once this process no longer leads: streams end and clients reconnect elsewhere. */
  active(): boolean;
}

interface Client {
  readonly res: ServerResponse;
  readonly jobId: string | undefined;
  /** The JSON last sent per event name: unchanged documents are not sent again. */
  readonly sent: Map<string, string>;
}

/**
 * Server-Sent Events of job and cluster changes. One ticker per server, at most one update per
 * `minIntervalMs` per client: whatever changed in between is coalesced into the next snapshot, so
 * a busy job costs the same as an idle one. Each document is computed once per tick whatever the
 * number of clients, and sent only to clients whose copy differs.
 */
export class LiveStream {
  private readonly clients = new Set<Client>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private lastPingMs = 0;
  private closed = false;

  constructor(
    private readonly source: StreamSnapshotSource,
    private readonly minIntervalMs: number,
    private readonly logger: Logger,
    private readonly pingIntervalMs = 15_000,
  ) {}

  get clientCount(): number {
    return this.clients.size;
  }

  /** Takes over a hijacked response; the first snapshot follows at once. */
  attach(res: ServerResponse, headers: Record<string, string>, jobId: string | undefined): void {
    if (this.closed) {
      res.destroy();
      return;
    }
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Reconnect soon after a leader dies; the client picks the next leader itself.
    res.write(`retry: 1000\n\n`);
    const client: Client = { res, jobId, sent: new Map() };
    this.clients.add(client);
    res.on('close', () => this.clients.delete(client));
    if (!this.timer) this.timer = setInterval(() => void this.tick(), this.minIntervalMs);
    void this.tick();
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.clients.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      if (!this.source.active()) {
        for (const c of this.clients) this.end(c, 'leadership-lost');
        return;
      }
      const common = await this.source.common();
      const perJob = new Map<string, Record<string, unknown>>();
      for (const c of this.clients) {
        if (c.jobId && !perJob.has(c.jobId))
          perJob.set(
            c.jobId,
            await this.source
              .job(c.jobId)
              .catch((err: unknown) => ({ error: { errors: [String((err as Error).message ?? err)] } })),
          );
      }
      const encoded = new Map<unknown, string>();
      const json = (doc: unknown): string => {
        let s = encoded.get(doc);
        if (s === undefined) encoded.set(doc, (s = JSON.stringify(doc)));
        return s;
      };
      const now = Date.now();
      const ping = now - this.lastPingMs >= this.pingIntervalMs;
      if (ping) this.lastPingMs = now;
      for (const c of this.clients) {
        // A client that does not read keeps its old copies and gets the newest state once it drains.
        if (c.res.writableLength > 1 << 20) continue;
        const docs = { ...common, ...(c.jobId ? perJob.get(c.jobId) : {}) };
        let out = '';
        for (const [event, doc] of Object.entries(docs)) {
          const s = json(doc);
          if (c.sent.get(event) === s) continue;
          c.sent.set(event, s);
          out += `event: ${event}\ndata: ${s}\n\n`;
        }
        if (!out && ping) out = `: ping\n\n`;
        if (out) c.res.write(out);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'live stream update failed');
    } finally {
      this.ticking = false;
    }
  }

  private end(c: Client, reason: string): void {
    this.clients.delete(c);
    c.res.end(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    for (const c of this.clients) c.res.destroy();
    this.clients.clear();
  }
}
