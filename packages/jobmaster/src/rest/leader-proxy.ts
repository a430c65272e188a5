import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, ReboundError, errorMessage, pathOf, type Logger } from '@rebound/core';

const seconds = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * Marks a request a standby proxies to the leader. A JobMaster that is not the leader when such a
 * request reaches it answers 503 instead of proxying again, so a request crosses at most one hop
 * whatever the HA store says during a leader change.
 */
export const PROXIED_BY_HEADER = 'x-rebound-proxied-by';

/** The leader as the HA services name it: its id and its published (checked) REST URL. */
export interface LeaderEndpoint {
  readonly id: string;
  readonly restUrl: string;
}

/** A standby cannot answer: no leader reachable in time, or the request was already proxied once. */
export class LeaderProxyError extends ReboundError {
  constructor(
    message: string,
    /** Why the leader did not answer, in a few words (e.g. for an answer from the HA store instead). */
    readonly reason: string,
  ) {
    super(ErrorCode.UNAVAILABLE, message);
  }
}

/** A write sent to a standby: answered 421 with the leader's address (a standby proxies reads only). */
export class StandbyWriteError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.NOT_LEADER, message);
  }
}

/**
 * Whether a request comes from a browser, which gets a redirect rather than a proxied answer: the
 * page then talks to the leader itself, with its session cookie, and its live stream follows the
 * leader. Every current browser sends `Sec-Fetch-Site` with every request (Node's fetch sends
 * only `Sec-Fetch-Mode`, so that one says nothing); a session cookie without an Authorization
 * header is a browser's too. curl, fetch in scripts, the CLI and Prometheus send neither.
 */
export function isBrowserRequest(req: FastifyRequest): boolean {
  if (req.headers['sec-fetch-site'] !== undefined) return true;
  return req.headers.authorization === undefined && req.headers.cookie !== undefined;
}

/** A header value fit for an error line: what another process wrote, so short and printable only. */
function printable(value: unknown): string {
  return String(value)
    .replace(/[^\w.:@-]/g, '?')
    .slice(0, 64);
}

/** The id of the JobMaster that proxied `req`, if it was proxied. */
export function proxiedBy(req: FastifyRequest): string | undefined {
  const v = req.headers[PROXIED_BY_HEADER];
  return v === undefined ? undefined : printable(Array.isArray(v) ? v[0] : v);
}

/** Headers of the leader's answer that pass through; never its cookies or CORS headers. */
const PASSED_RESPONSE_HEADERS = ['content-type', 'cache-control', 'retry-after', 'www-authenticate'];

export interface LeaderProxyOptions {
  /** This JobMaster's id, sent as the marker. */
  readonly selfId: string;
  readonly timeoutMs: number;
  /** This process's own credential for the leader (ClusterSecurity.httpHeaders()). */
  readonly credentials: () => Record<string, string>;
  readonly logger: Logger;
}

/**
 * A standby's reads, answered by the leader. The request goes only to the REST URL the HA
 * services publish for the current leader, with this JobMaster's own membership (the cluster
 * secret it holds) and none of the caller's headers: not its Authorization, cookies, Origin or
 * forwarding headers. Only Accept and Last-Event-ID are passed on. Every proxied call has a
 * deadline (`rest.proxy.timeout`; for the live stream, the time to its response headers), and
 * a failure is a 503 whose line says what failed.
 */
export class LeaderProxy {
  constructor(private readonly opts: LeaderProxyOptions) {}

  /** The URL on the leader for `req`: the leader's origin and the request's own path and query. */
  private target(req: FastifyRequest, leader: LeaderEndpoint): URL {
    // req.url is the path a route matched (it starts with one '/'); resolving it against the
    // origin could not leave the leader's host, and `?token=` never travels on.
    const url = new URL(new URL(leader.restUrl).origin + (req.url.startsWith('/') ? req.url : `/${req.url}`));
    url.searchParams.delete('token');
    return url;
  }

  async forward(req: FastifyRequest, reply: FastifyReply, leader: LeaderEndpoint): Promise<FastifyReply> {
    const url = this.target(req, leader);
    const what = `${req.method} ${pathOf(req.url)}`;
    const streaming = pathOf(req.url).endsWith('/stream');
    const abort = new AbortController();
    const timer = setTimeout(
      () =>
        abort.abort(
          new LeaderProxyError(
            `JobMaster ${this.opts.selfId} is a standby and proxied ${what} to the leader ${leader.id} at ${leader.restUrl}, which did not answer within ${seconds(this.opts.timeoutMs)} (rest.proxy.timeout); retry shortly (a leader change may be under way)`,
            `the leader ${leader.id} at ${leader.restUrl} did not answer within ${seconds(this.opts.timeoutMs)} (rest.proxy.timeout)`,
          ),
        ),
      this.opts.timeoutMs,
    );
    const headers: Record<string, string> = { ...this.opts.credentials(), [PROXIED_BY_HEADER]: this.opts.selfId };
    for (const name of ['accept', 'last-event-id'] as const) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    let res: Response;
    try {
      res = await fetch(url, { method: req.method, headers, redirect: 'manual', signal: abort.signal });
    } catch (err) {
      clearTimeout(timer);
      throw this.failure(err, what, leader, abort.signal);
    }
    const passed: Record<string, string> = {};
    for (const name of PASSED_RESPONSE_HEADERS) {
      const v = res.headers.get(name);
      if (v !== null) passed[name] = v;
    }
    if (streaming && res.ok && res.body) {
      // The stream lasts as long as the leader serves it: the deadline was for its start. It ends
      // when either side goes away (a dying leader ends it; the client reconnects).
      clearTimeout(timer);
      const raw = reply.raw;
      reply.hijack();
      raw.writeHead(res.status, { ...(reply.getHeaders() as Record<string, string>), ...passed });
      const body = res.body.getReader();
      raw.once('close', () => abort.abort());
      void (async () => {
        try {
          for (;;) {
            const { value, done } = await body.read();
            if (done) break;
            if (!raw.write(value)) await new Promise((r) => raw.once('drain', r));
          }
        } catch {
          // The leader went away or the client left: end the stream either way.
        } finally {
          raw.end();
        }
      })();
      return reply;
    }
    let body: ArrayBuffer;
    try {
      body = await res.arrayBuffer();
    } catch (err) {
      throw this.failure(err, what, leader, abort.signal);
    } finally {
      clearTimeout(timer);
    }
    if (res.status >= 300 && res.status < 400) {
      // The leader never redirects a proxied request (the marker): whatever did is not our leader.
      throw new LeaderProxyError(
        `JobMaster ${this.opts.selfId} proxied ${what} to ${leader.restUrl}, which answered a redirect; retry shortly`,
        `the leader ${leader.id} at ${leader.restUrl} answered a redirect`,
      );
    }
    return reply.code(res.status).headers(passed).send(Buffer.from(body));
  }

  private failure(err: unknown, what: string, leader: LeaderEndpoint, signal: AbortSignal): LeaderProxyError {
    if (signal.aborted && signal.reason instanceof LeaderProxyError) return signal.reason;
    const cause = (err as { cause?: { code?: unknown } }).cause;
    const reason = typeof cause?.code === 'string' ? cause.code : errorMessage(err);
    this.opts.logger.debug({ leader: leader.id, what, reason }, 'proxying a REST request to the leader failed');
    return new LeaderProxyError(
      `JobMaster ${this.opts.selfId} is a standby and could not reach the leader ${leader.id} at ${leader.restUrl} for ${what} (${printable(reason)}); retry shortly (a leader change may be under way)`,
      `the leader ${leader.id} at ${leader.restUrl} could not be reached (${printable(reason)})`,
    );
  }
}
