import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, ReboundError, pathOf, type Clock } from '@rebound/core';
import type { EndpointRegistry, HighAvailabilityServices } from '@rebound/ha';
import { ANSWERED_FROM_HEADER, HA_STORE_SOURCE, haStoreJobs, type AnsweredFrom } from './ha-store-jobs.js';
import {
  LeaderProxyError,
  StandbyWriteError,
  isBrowserRequest,
  proxiedBy,
  type LeaderEndpoint,
  type LeaderProxy,
} from './leader-proxy.js';
import type { JobsSource, LeaderView } from './leader-view.js';

class NoLeaderError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.LEADER_NOT_FOUND, message);
  }
}

export interface StandbyRoutingOptions {
  /** This JobMaster's id. */
  readonly id: string;
  readonly ha: HighAvailabilityServices;
  /** The endpoint registry with checked URLs (trustedEndpoints). */
  readonly endpoints: EndpointRegistry;
  /** The leader services while this process leads. */
  readonly leader: () => LeaderView | undefined;
  readonly clock: Clock;
  readonly proxy: LeaderProxy;
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Route handlers for what the leader answers, and what a standby does instead: it proxies reads to
 * the leader (browsers get a 307, which keeps their session), refuses writes with the leader's
 * address, and answers 503 when no leader answers or when the request was already proxied once (no
 * second hop). Job documents the HA store can tell are the exception to the 503: `onLeaderOrStore`.
 */
export function standbyRouting(opts: StandbyRoutingOptions): {
  onLeader: <T>(fn: (l: LeaderView, req: FastifyRequest, reply: FastifyReply) => Promise<T> | T) => Handler;
  onLeaderOrStore: (fn: (jobs: JobsSource, req: FastifyRequest) => Promise<Record<string, unknown>>) => Handler;
} {
  const { id, clock } = opts;
  const storeJobs = haStoreJobs(opts.ha.jobGraphStore());

  /** The leader and its REST URL, when another process leads and published one; else why not. */
  const leaderEndpoint = async (): Promise<LeaderEndpoint | { noLeader: string }> => {
    const info = await opts.ha.getLeader().catch(() => undefined);
    if (!info) return { noLeader: 'no leader is recorded in the HA store' };
    if (info.jobmasterId === id)
      return { noLeader: 'this JobMaster is recorded as the leader but does not lead (leadership is changing)' };
    const restUrl = (await opts.endpoints.read(info.jobmasterId).catch(() => undefined))?.restUrl;
    if (restUrl === undefined) return { noLeader: `the leader ${info.jobmasterId} has published no REST address` };
    return { id: info.jobmasterId, restUrl };
  };

  /** A request this JobMaster cannot answer as leader; `fromStore` answers a read no leader does. */
  const asStandby = async (
    req: FastifyRequest,
    reply: FastifyReply,
    fromStore?: (reason: string) => Promise<unknown>,
  ): Promise<unknown> => {
    const via = proxiedBy(req);
    if (via !== undefined)
      throw new NoLeaderError(
        `JobMaster ${id} got ${req.method} ${pathOf(req.url)} proxied by ${via} but is not the leader (leadership is changing); retry shortly`,
      );
    const leader = await leaderEndpoint();
    const read = req.method === 'GET' || req.method === 'HEAD';
    if ('noLeader' in leader) {
      if (read && fromStore) return fromStore(leader.noLeader);
      throw new NoLeaderError(
        `JobMaster ${id} is not the leader and no leader is known right now; retry shortly (a standby takes over after the lease timeout)`,
      );
    }
    if (isBrowserRequest(req)) return reply.redirect(`${leader.restUrl}${req.url}`, 307);
    if (!read)
      throw new StandbyWriteError(
        `JobMaster ${id} is a standby and proxies reads only: send ${req.method} ${pathOf(req.url)} to the leader ${leader.id} at ${leader.restUrl}`,
      );
    try {
      return await opts.proxy.forward(req, reply, leader);
    } catch (err) {
      if (err instanceof LeaderProxyError && fromStore) return fromStore(err.reason);
      throw err;
    }
  };

  return {
    onLeader: (fn) => async (req, reply) => {
      const l = opts.leader();
      return l ? fn(l, req, reply) : asStandby(req, reply);
    },
    /**
     * A job document the HA store can tell: from the leader as onLeader does, and while no leader
     * answers (none is known, or it cannot be reached, as between a leader's death and the end of
     * its lease), from the HA store, marked in a header and in the body's `answeredFrom`.
     */
    onLeaderOrStore: (fn) => async (req, reply) => {
      const l = opts.leader();
      if (l) return fn(l, req);
      return asStandby(req, reply, async (reason) => {
        const asOfMs = clock.now();
        const body = await fn(storeJobs, req);
        const answeredFrom: AnsweredFrom = { source: HA_STORE_SOURCE, jobmaster: id, asOfMs, reason };
        void reply.header(ANSWERED_FROM_HEADER, `${HA_STORE_SOURCE}; as-of=${new Date(asOfMs).toISOString()}`);
        return { ...body, answeredFrom };
      });
    },
  };
}
