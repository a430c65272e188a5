import { hostname } from 'node:os';
import { dashboardAssets } from '@rebound/dashboard';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  ClusterSecurity,
  ErrorCode,
  JobNotFoundError,
  OPTIONS,
  ReboundError,
  errorMessage,
  endpointOrigin,
  httpCredentialOf,
  pathOf,
  type Clock,
  type ConfigKey,
  type Configuration,
  type Logger,
  ConfigError,
  AddressInUseError,
} from '@rebound/core';
import type { HighAvailabilityServices } from '@rebound/ha';
import { clusterView } from './cluster-view.js';
import { REBOUND_VERSION } from './flink-json.js';
import { BadRequestError, JobViews, intParam, parseJobId } from './job-views.js';
import type { LeaderView } from './leader-view.js';
import { standbyRouting } from './standby-routing.js';
import { LiveStream } from './live-stream.js';
import { hostAllowed, hostNameOf } from './request-guard.js';
import { trustedEndpoints } from './trusted-endpoints.js';
import { LeaderProxy, StandbyWriteError } from './leader-proxy.js';
import { createJobMasterMetrics } from './metrics.js';

export interface RestServerOptions {
  readonly id: string;
  /** Leader record, stored jobs and their event logs. */
  readonly ha: HighAvailabilityServices;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The leader services while this process leads. */
  readonly leader: () => LeaderView | undefined;
  /** More routes on the same server (metrics, dashboard), registered before it listens. */
  readonly extraRoutes?: (app: FastifyInstance) => void | Promise<void>;
}

export interface RestServer {
  /** e.g. http://127.0.0.1:8081 */
  readonly url: string;
  readonly port: number;
  readonly stream: LiveStream;
  close(): Promise<void>;
}

function statusOf(err: unknown): number {
  if (err instanceof JobNotFoundError || (err instanceof ReboundError && err.code === ErrorCode.JOB_NOT_FOUND))
    return 404;
  if (err instanceof BadRequestError) return 400;
  if (err instanceof StandbyWriteError) return 421;
  if (
    err instanceof ReboundError &&
    (err.code === ErrorCode.NOT_LEADER || err.code === ErrorCode.LEADER_NOT_FOUND || err.code === ErrorCode.UNAVAILABLE)
  )
    return 503;
  const sc = (err as { statusCode?: unknown }).statusCode;
  if (typeof sc === 'number' && sc >= 400 && sc < 600) return sc;
  return 500;
}

const WILDCARD = new Set(['0.0.0.0', '::', '']);

/**
 * The REST API of one JobMaster: Flink's REST v1 paths and shapes (with and without the `/v1`
 * prefix, as Flink serves them), Rebound's recovery, event-log and cluster documents, and the live
 * stream. Every JobMaster serves it; a standby answers what it can from the HA directory and
 * proxies the rest of the reads to the leader (a browser gets a 307 there instead; see
 * leader-proxy.ts), so an API client gets the leader's answer from any JobMaster. While no
 * leader answers, a standby answers the job documents from the HA store, marked as such.
 */
export async function startRestServer(opts: RestServerOptions): Promise<RestServer> {
  const { config, id, clock } = opts;
  const logger = opts.logger.child({ component: 'RestServer' });
  const host = config.getString('rest.bind-address');
  const views = new JobViews(opts.ha.storageDir, opts.ha.jobGraphStore(), config, clock);
  const stream = new LiveStream(
    {
      active: () => opts.leader() !== undefined,
      common: async () => {
        const l = opts.leader();
        if (!l) return {};
        return {
          cluster: await clusterView(opts.ha, id, l, clock.now(), endpoints),
          jobs: await views.jobsOverview(l),
        };
      },
      job: async (jobId) => {
        const l = opts.leader();
        if (!l) return {};
        return { job: await views.job(l, jobId), recoveries: await views.recoveries(jobId, l) };
      },
    },
    config.getDurationMs('rest.stream.min-interval'),
    logger,
  );

  const app = Fastify({
    logger: false,
    bodyLimit: 1 << 20,
    return503OnClosing: true,
    forceCloseConnections: true,
    // Malformed URLs and headers get the same JSON error body as everything else.
    frameworkErrors: (err, _req, reply) => {
      const status = statusOf(err);
      void (reply as FastifyReply).code(status === 500 ? 400 : status).send({ errors: [errorMessage(err)] });
    },
  });
  let selfUrl = '';
  const endpoints = trustedEndpoints(opts.ha.endpoints(), logger);

  // Cross-origin reads from the other JobMasters' dashboards (after a leader dies the page talks to
  // another JobMaster): only origins of this cluster's JobMasters are allowed.
  let allowed = { at: 0, origins: new Set<string>() };
  const allowedOrigins = async (): Promise<Set<string>> => {
    if (clock.now() - allowed.at > 1000) {
      const origins = new Set<string>();
      for (const ep of await endpoints.list().catch(() => [])) {
        const origin = endpointOrigin(ep.restUrl);
        if (origin) origins.add(origin);
      }
      const self = endpointOrigin(selfUrl);
      if (self) origins.add(self);
      allowed = { at: clock.now(), origins };
    }
    return allowed.origins;
  };
  const security = ClusterSecurity.of(config);
  const sessions = security.dashboardSessions(config.getDurationMs('rest.session.timeout'));
  const hostNames = async (): Promise<Set<string>> => {
    const names = new Set([
      hostname().toLowerCase(),
      host.toLowerCase(),
      config.getString('rest.address').toLowerCase(),
    ]);
    for (const origin of await allowedOrigins()) {
      const name = hostNameOf(new URL(origin).host);
      if (name) names.add(name);
    }
    return names;
  };
  app.addHook('onRequest', async (req, reply) => {
    // Nothing of a response may leave in a Referer: the first page's URL holds ?token=.
    reply.header('referrer-policy', 'no-referrer');
    if (!hostAllowed(req.headers.host, await hostNames())) {
      return reply.code(421).send({
        errors: [
          `Host '${String(req.headers.host).slice(0, 100)}' is not this JobMaster's; use its address or set rest.address`,
        ],
      });
    }
    const origin = req.headers.origin;
    const allowedOrigin =
      typeof origin === 'string' && ((await allowedOrigins()).has(origin) || origin === `http://${req.headers.host}`);
    if (allowedOrigin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('vary', 'Origin');
      reply.header('access-control-allow-methods', 'GET, PATCH, OPTIONS');
      reply.header('access-control-allow-headers', 'authorization, content-type, last-event-id');
      // The page follows a failover to another JobMaster's origin and brings its cookie along.
      reply.header('access-control-allow-credentials', 'true');
    }
    if (req.method === 'OPTIONS') return; // a CORS preflight carries no credential
    // A page of another origin (another port on the same host is the same site, so SameSite
    // does not keep the cookie from it) may not act with the browser's session.
    if (origin !== undefined && !allowedOrigin) {
      return reply
        .code(403)
        .send({ errors: [`Origin '${String(origin).slice(0, 100)}' is not a JobMaster of this cluster`] });
    }
    // A cluster with a secret asks for it, or a dashboard session, of every request.
    if (!security.authenticated) return;
    const given = httpCredentialOf(req.headers, req.url);
    if (given === undefined && sessions?.verify(req.headers.cookie, clock.now())) return;
    if (!security.accepts(given?.secret)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({
          errors: [
            `${given ? 'wrong' : 'no'} cluster secret: send 'Authorization: Bearer <secret>' (security.auth.token-file), or open the dashboard link 'rebound local up' prints`,
          ],
        });
    }
    // A browser that opened the printed link gets a session for its API calls and the live
    // stream (EventSource cannot send headers), never the secret itself.
    if (given?.via === 'query' && sessions) reply.header('set-cookie', sessions.issue(clock.now()).setCookie);
  });
  app.options('/*', async (_req, reply) => reply.code(204).send());

  app.setErrorHandler((err, req, reply) => {
    const status = statusOf(err);
    // The path only: a query may hold the secret (?token=).
    if (status >= 500 && status !== 503)
      logger.error({ err: errorMessage(err), method: req.method, path: pathOf(req.url) }, 'REST handler failed');
    void reply.code(status).send({ errors: [errorMessage(err)] });
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ errors: [`Not found: ${req.method} ${pathOf(req.url)}`] });
  });

  const { onLeader, onLeaderOrStore } = standbyRouting({
    id,
    ha: opts.ha,
    endpoints,
    leader: opts.leader,
    clock,
    proxy: new LeaderProxy({
      selfId: id,
      timeoutMs: config.getDurationMs('rest.proxy.timeout'),
      credentials: () => security.httpHeaders(),
      logger,
    }),
  });

  const jobIdOf = (req: FastifyRequest): string => parseJobId((req.params as { jobid: string }).jobid);
  const query = (req: FastifyRequest): Record<string, unknown> => (req.query ?? {}) as Record<string, unknown>;

  const routes = async (r: FastifyInstance): Promise<void> => {
    r.get('/config', async () => ({
      'refresh-interval': 3000,
      'timezone-name': 'Coordinated Universal Time',
      'timezone-offset': 0,
      'flink-version': `rebound-${REBOUND_VERSION}`,
      'flink-revision': '',
      features: { 'web-submit': false, 'web-cancel': true, 'web-rescale': false, 'web-history': false },
    }));
    r.get(
      '/overview',
      onLeaderOrStore((jobs) => views.overview(jobs)),
    );
    r.get(
      '/jobs',
      onLeaderOrStore((jobs) => views.jobIds(jobs)),
    );
    r.get(
      '/jobs/overview',
      onLeaderOrStore((jobs) => views.jobsOverview(jobs)),
    );
    r.get(
      '/jobs/:jobid',
      onLeaderOrStore((jobs, req) => views.job(jobs, jobIdOf(req))),
    );
    r.get(
      '/jobs/:jobid/exceptions',
      onLeaderOrStore((jobs, req) => views.exceptions(jobs, jobIdOf(req))),
    );
    r.patch(
      '/jobs/:jobid',
      onLeader(async (l, req, reply) => {
        const jobId = jobIdOf(req);
        const mode = query(req).mode ?? 'cancel';
        if (mode !== 'cancel')
          throw new BadRequestError(
            `mode '${String(mode).slice(0, 32)}' is not supported; use mode=cancel (batch jobs have no stop-with-savepoint)`,
          );
        await l.status(jobId);
        await l.cancel(jobId);
        return reply.code(202).send({});
      }),
    );
    r.get(
      '/taskmanagers',
      onLeader((l) => views.taskManagers(l)),
    );
    r.get('/jobmanager/config', async () =>
      (Object.keys(OPTIONS) as ConfigKey[]).map((key) => ({ key, value: config.getString(key) })),
    );
    // Rebound's own documents: answered by any JobMaster from the HA directory.
    r.get('/cluster', async () => clusterView(opts.ha, id, opts.leader(), clock.now(), endpoints));
    r.get('/jobs/:jobid/recoveries', async (req) => views.recoveries(jobIdOf(req), opts.leader()));
    r.get('/jobs/:jobid/events', async (req) => {
      const q = query(req);
      return views.events(jobIdOf(req), intParam(q, 'offset', 0, 0, 1_000_000_000), intParam(q, 'limit', 100, 1, 1000));
    });
    r.get(
      '/stream',
      onLeader(async (_l, req, reply) => {
        const job = query(req).job;
        const jobId = job === undefined || job === '' ? undefined : parseJobId(String(job));
        const headers = Object.fromEntries(Object.entries(reply.getHeaders()).map(([k, v]) => [k, String(v)]));
        reply.hijack();
        stream.attach(reply.raw, headers, jobId);
        return reply;
      }),
    );
  };
  await app.register(routes);
  await app.register(routes, { prefix: '/v1' });
  // The dashboard: bundled on first request, served by every JobMaster (it works through a failover).
  app.get('/', async (_req, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await dashboardAssets()).html),
  );
  app.get('/assets/app.js', async (_req, reply) =>
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await dashboardAssets()).js),
  );
  const metrics = createJobMasterMetrics({ store: opts.ha.jobGraphStore(), jobmasterId: id, leader: opts.leader });
  app.get('/metrics', async (_req, reply) => {
    const text = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).send(text);
  });
  await opts.extraRoutes?.(app);

  const requestedPort = config.getInt('rest.port');
  try {
    await app.listen({ host, port: requestedPort });
  } catch (err) {
    await app.close().catch(() => undefined);
    metrics.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new AddressInUseError(
        `rest.port ${requestedPort} on ${host} is already in use; choose another rest.port (0: any free port)`,
      );
    }
    throw new ConfigError(
      `cannot serve the REST API on ${host}:${requestedPort} (rest.bind-address, rest.port): ${errorMessage(err)}`,
    );
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : requestedPort;
  const advertisedHost = config.getString('rest.address') || (WILDCARD.has(host) ? hostname() : host);
  const advertised = advertisedHost.includes(':') ? `[${advertisedHost}]` : advertisedHost;
  selfUrl = `http://${advertised}:${port}`;
  logger.info({ url: selfUrl }, 'REST API and dashboard serving');

  return {
    url: selfUrl,
    port,
    stream,
    close: async () => {
      stream.close();
      metrics.close();
      await app.close();
    },
  };
}
