import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { FLINK_SHAPES } from './flink-rest-shapes.js';
import { HISTOGRAM_JOB, histogramArgs, waitForLog } from './recovery-util.js';
import { SseClient, http, missingFields, rawHttpStatus, useCredentials } from './rest-util.js';
import { makeTempDir } from './util.js';

type Json = Record<string, unknown>;

/**
 * The REST API against a real cluster: Flink's documented shapes field by field, bad input,
 * a standby's redirect, the live stream and the recovery documents across a leader kill.
 */
describe('REST API', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'rest.stream.min-interval': '200 ms',
        // Small blocks: the slow reduce of the fixture blocks its thread for one block at a time.
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-rest-');
    useCredentials(cluster.security().httpHeaders());
  });

  it('asks every request for the cluster secret, and gives a browser a session instead of it', async () => {
    const { leader } = await urls();
    const tm = (await cluster.processes()).find((p) => p.role === 'taskmanager')!;
    const none = { authorization: '' };
    for (const url of [`${leader}/overview`, `${leader}/metrics`, `${leader}/`, `${tm.metricsUrl}/metrics`]) {
      const refused = await http<{ errors: string[] }>(url, { headers: none });
      expect(refused.status, url).toBe(401);
      expect(refused.body.errors[0]).toMatch(/no cluster secret: send 'Authorization: Bearer <secret>'/);
      expect((await http(url, { headers: { authorization: 'Bearer not-the-secret' } })).status, url).toBe(401);
    }
    // The printed dashboard link: ?token= opens it once and leaves a session cookie behind, which
    // holds no secret, expires, and which the standby accepts as well (the page follows a failover).
    const secret = cluster.security().httpHeaders().authorization!.slice('Bearer '.length);
    const opened = await http(`${leader}/overview${cluster.security().dashboardQuery()}`, { headers: none });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
    const setCookie = opened.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      /^rebound_session_[0-9a-f]{12}=[0-9a-z]+\.[\w-]{24}\.[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/,
    );
    expect(setCookie).not.toContain(secret);
    const cookie = setCookie.split(';')[0]!;
    const { standby } = await urls();
    for (const url of [`${leader}/jobs/overview`, `${standby}/cluster`])
      expect((await http(url, { headers: { ...none, cookie } })).status, url).toBe(200);
    // The cookie that held the secret itself opens nothing any more.
    expect(
      (await http(`${leader}/jobs/overview`, { headers: { ...none, cookie: `rebound_token=${secret}` } })).status,
    ).toBe(401);
    // A forged or tampered session is no credential.
    const tampered = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await http(`${leader}/jobs/overview`, { headers: { ...none, cookie: tampered } })).status).toBe(401);
    // Without a credential: the live stream and a cancel are refused before they do anything.
    expect((await http(`${leader}/stream`, { headers: none })).status).toBe(401);
    expect(
      (await http(`${leader}/jobs/${'0'.repeat(32)}?mode=cancel`, { method: 'PATCH', headers: none })).status,
    ).toBe(401);
    // A page of another origin, on the same host (same site: SameSite lets the cookie go), may not
    // use the browser's session; nor a page of a rebinding domain that resolves to 127.0.0.1.
    const foreign = await http<{ errors: string[] }>(`${leader}/jobs/overview`, {
      headers: { ...none, cookie, origin: 'http://127.0.0.1:1' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(
      (
        await http(`${leader}/jobs/${'0'.repeat(32)}?mode=cancel`, {
          method: 'PATCH',
          headers: { ...none, cookie, origin: 'http://127.0.0.1:1' },
        })
      ).status,
    ).toBe(403);
    const port = new URL(leader).port;
    for (const host of ['rebind.attacker.example', `rebind.attacker.example:${port}`]) {
      expect(
        await rawHttpStatus(
          leader,
          `GET /jobs/overview HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
        ),
        host,
      ).toBe(421);
    }
    expect(
      await rawHttpStatus(
        leader,
        `GET /jobs/overview HTTP/1.1\r\nHost: localhost:${port}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
      ),
    ).toBe(200);
    // `local status` does not print the secret again; no log line holds it.
    const status = await cluster.rebound(['local', 'status']);
    expect(status.stdout).not.toContain(secret);
    for (const p of await cluster.processes())
      expect(await readFile(p.logFile, 'utf8'), p.logFile).not.toContain(secret);
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function urls(): Promise<{ leader: string; standby: string; leaderId: string }> {
    const leader = await cluster.leader();
    const jms = (await cluster.processes()).filter((p) => p.role === 'jobmaster' && p.restUrl);
    const l = jms.find((p) => p.id === leader?.jobmasterId);
    const s = jms.find((p) => p.id !== leader?.jobmasterId);
    if (!l?.restUrl || !s?.restUrl) throw new Error(`no restUrl in cluster.json: ${JSON.stringify(jms)}`);
    return { leader: l.restUrl, standby: s.restUrl, leaderId: l.id };
  }

  it('writes a restUrl per JobMaster into cluster.json, bound to loopback', async () => {
    for (const p of (await cluster.processes()).filter((x) => x.role === 'jobmaster')) {
      expect(p.restUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    const { leader } = await urls();
    const status = await cluster.rebound(['local', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`dashboard ${leader}/`);
    const page = await http<string>(`${leader}/`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="assets/app.js">');
    const js = await http<string>(`${leader}/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
  });

  it("answers Flink's paths with Flink's documented fields", async () => {
    const { leader } = await urls();
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 400, keys: 20, output: join(data, 'shapes') }),
    );
    await cluster.waitForJob(jobId, 60_000);

    const overview = await http<Json>(`${leader}/overview`);
    expect(overview.status).toBe(200);
    expect(missingFields(overview.body, FLINK_SHAPES.clusterOverview)).toEqual([]);
    expect(overview.body).toMatchObject({ taskmanagers: 2, 'slots-total': 4, 'jobs-finished': 1 });

    for (const path of ['/jobs/overview', '/v1/jobs/overview']) {
      const jobs = await http<{ jobs: Json[] }>(`${leader}${path}`);
      expect(jobs.status).toBe(200);
      const job = jobs.body.jobs.find((j) => j.jid === jobId)!;
      expect(missingFields(job, FLINK_SHAPES.jobDetails)).toEqual([]);
      expect(missingFields(job.tasks, FLINK_SHAPES.jobDetailsTasks)).toEqual([]);
      expect(job.state).toBe('FINISHED');
      expect((job.tasks as Json).finished).toBe((job.tasks as Json).total);
      expect(job['end-time']).toBeGreaterThanOrEqual(job['start-time'] as number);
    }

    const details = await http<Json>(`${leader}/jobs/${jobId}`);
    expect(details.status).toBe(200);
    expect(missingFields(details.body, FLINK_SHAPES.jobDetailsInfo)).toEqual([]);
    expect(Object.keys(details.body.timestamps as Json).sort()).toEqual([...FLINK_SHAPES.jobStatuses].sort());
    expect(Object.keys(details.body['status-counts'] as Json).sort()).toEqual([...FLINK_SHAPES.executionStates].sort());
    const vertices = details.body.vertices as Json[];
    expect(vertices.length).toBe(3);
    for (const v of vertices) {
      expect(missingFields(v, FLINK_SHAPES.jobDetailsVertexInfo)).toEqual([]);
      expect(Object.keys(v.tasks as Json).sort()).toEqual([...FLINK_SHAPES.executionStates].sort());
      expect(missingFields(v.metrics, FLINK_SHAPES.ioMetricsInfo)).toEqual([]);
      expect(v.status).toBe('FINISHED');
      expect((v.tasks as Json).FINISHED).toBe(v.parallelism);
    }
    const plan = details.body.plan as { nodes: Json[] };
    expect(plan.nodes.map((n) => n.id)).toEqual(vertices.map((v) => v.id));
    for (const node of plan.nodes) expect(missingFields(node, FLINK_SHAPES.planNode)).toEqual([]);
    const inputs = plan.nodes.flatMap((n) => n.inputs as Json[]);
    expect(inputs.length).toBe(2);
    for (const input of inputs) expect(missingFields(input, FLINK_SHAPES.planInput)).toEqual([]);
    expect(plan.nodes[1]!.inputs).toMatchObject([{ id: vertices[0]!.id }]);

    const exceptions = await http<Json>(`${leader}/jobs/${jobId}/exceptions`);
    expect(exceptions.status).toBe(200);
    expect(
      missingFields(exceptions.body, [...FLINK_SHAPES.jobExceptions, ...FLINK_SHAPES.jobExceptionsLegacy]),
    ).toEqual([]);
    expect(missingFields(exceptions.body.exceptionHistory, FLINK_SHAPES.exceptionHistory)).toEqual([]);

    const tms = await http<{ taskmanagers: Json[] }>(`${leader}/taskmanagers`);
    expect(tms.status).toBe(200);
    expect(tms.body.taskmanagers.map((t) => t.id).sort()).toEqual(['tm-1', 'tm-2']);
    for (const t of tms.body.taskmanagers) {
      expect(missingFields(t, FLINK_SHAPES.taskManagerInfo)).toEqual([]);
      expect(t.slotsNumber).toBe(2);
    }

    const config = await http<{ key: string; value: string }[]>(`${leader}/jobmanager/config`);
    expect(config.status).toBe(200);
    expect(config.body.find((e) => e.key === 'rest.bind-address')).toEqual({
      key: 'rest.bind-address',
      value: '127.0.0.1',
    });
    expect(config.body.find((e) => e.key === 'execution.batch.job-recovery.enabled')?.value).toBe('true');
  });

  it('serves Prometheus metrics on every JobMaster and TaskManager', async () => {
    const { leader, standby } = await urls();
    const text = (await http<string>(`${leader}/metrics`)).body;
    for (const name of [
      'rebound_jobmaster_leader',
      'rebound_jobmaster_epoch',
      'rebound_jobs',
      'rebound_recoveries_total',
      'rebound_event_store_appends_total',
      'rebound_event_store_flush_duration_seconds',
    ]) {
      expect(text).toContain(`# HELP ${name} `);
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toMatch(/^rebound_jobmaster_leader\{jobmaster_id="jm-\d"\} 1$/m);
    expect(text).toMatch(/^rebound_jobs\{state="FINISHED",jobmaster_id="jm-\d"\} [1-9]/m);
    expect(text).toMatch(/^rebound_event_store_appends_total\{jobmaster_id="jm-\d"\} [1-9]/m);
    expect((await http<string>(`${standby}/metrics`)).body).toMatch(
      /^rebound_jobmaster_leader\{jobmaster_id="jm-\d"\} 0$/m,
    );
    for (const name of text
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]!))
      expect(name).toMatch(/^rebound_/);

    const tms = (await cluster.processes()).filter((p) => p.role === 'taskmanager');
    expect(tms.length).toBe(2);
    for (const tm of tms) {
      expect(tm.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const m = (await http<string>(`${tm.metricsUrl}/metrics`)).body;
      expect(m).toContain('# TYPE rebound_taskmanager_slots gauge');
      expect(m).toContain(`rebound_taskmanager_slots{state="total",taskmanager_id="${tm.id}"} 2`);
      expect(m).toContain('# TYPE rebound_taskmanager_retained_partitions gauge');
      expect(m).toContain('# TYPE rebound_taskmanager_registration_retries_total counter');
      expect((await http(`${tm.metricsUrl}/nope`)).status).toBe(404);
    }
  });

  it('answers bad input with 4xx and a JSON errors array, and keeps serving', async () => {
    const { leader } = await urls();
    const cases: [string, string, number][] = [
      ['GET', '/jobs/not-a-job-id', 400],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef', 404],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef/exceptions', 404],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef/recoveries', 404],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef/events', 404],
      ['GET', '/no/such/path', 404],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef/events?limit=abc', 400],
      ['GET', '/jobs/0123456789abcdef0123456789abcdef/events?offset=-1', 400],
      ['GET', '/stream?job=xyz', 400],
      ['PATCH', '/jobs/0123456789abcdef0123456789abcdef?mode=cancel', 404],
      ['PATCH', `/jobs/0123456789abcdef0123456789abcdef?mode=stop`, 400],
      ['GET', `/jobs/${'%'.repeat(3)}`, 400],
    ];
    for (const [method, path, status] of cases) {
      const r = await http<{ errors: string[] }>(`${leader}${path}`, { method });
      expect({ path, status: r.status }).toEqual({ path, status });
      expect(Array.isArray(r.body.errors) && r.body.errors.length > 0).toBe(true);
    }
    expect((await http(`${leader}/overview`)).status).toBe(200);
  });

  it('cancels a job with PATCH /jobs/:jobid?mode=cancel', async () => {
    const { leader } = await urls();
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 2000, keys: 97, output: join(data, 'cancel'), reduceDelayMs: 20 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0' },
      },
    );
    await cluster.waitForJob(jobId, 30_000, ['RUNNING']);
    const r = await http(`${leader}/jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
    expect(r.status).toBe(202);
    await cluster.waitForJob(jobId, 30_000, ['CANCELED']);
    expect((await http<Json>(`${leader}/jobs/${jobId}`)).body.state).toBe('CANCELED');
  });

  it('redirects a standby to the leader, streams changes and shows the recovery after a leader kill', async () => {
    const { leader, standby, leaderId } = await urls();
    // A browser (Sec-Fetch-Site) is redirected; API clients get a proxied answer (rest-proxy.test.ts).
    const redirect = await http(`${standby}/jobs/overview`, {
      redirect: 'manual',
      headers: { 'sec-fetch-site': 'same-site' },
    });
    expect(redirect.status).toBe(307);
    expect(redirect.headers.get('location')).toBe(`${leader}/jobs/overview`);
    // Followed by hand with the secret: fetch drops credentials on a redirect to another origin
    // (another port), where a browser's cookie jar sends the dashboard's cookie along.
    const viaStandby = await http<{ jobs: Json[] }>(redirect.headers.get('location')!);
    expect(viaStandby.status).toBe(200);
    const cluster1 = await http<Json>(`${standby}/cluster`);
    expect(cluster1.body).toMatchObject({
      answeredBy: { leader: false },
      leader: { jobmasterId: leaderId, restUrl: leader },
    });

    // A slow middle stage (see the fixture): the leader dies while it runs, after the sources finished.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 2000, keys: 97, output: join(data, 'failover'), reduceDelayMs: 10 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0' },
      },
    );
    const sse = new SseClient(`${leader}/stream?job=${jobId}`);
    try {
      const first = await sse.next<Json>('job', (j) => j.jid === jobId, 30_000);
      expect(missingFields(first, FLINK_SHAPES.jobDetailsInfo)).toEqual([]);
      await sse.next<Json>('cluster', (c) => (c.epoch as number) > 0, 10_000);
      // Wait for some progress worth keeping, then kill the leader.
      await sse.next<Json>('job', (j) => ((j['status-counts'] as Json).FINISHED as number) >= 4, 60_000);
      // What the status counts is flushed to the event log a little later (a starved leader can
      // be killed in between): the events asserted below, and the 4 reused tasks, must be on disk.
      await waitForLog(cluster, jobId, (f) => f.size >= 4, 30_000, 'four finished subtasks');
      const before = (await cluster.leader())!.epoch;
      await cluster.killLeader();
      await cluster.waitFor(() => sse.ended, 10_000, 'the stream of the killed leader to end');

      // The event log is readable from the standby whether or not it leads yet (it is read from disk).
      const events = await http<{ total: number; events: Json[] }>(`${standby}/jobs/${jobId}/events?limit=5`);
      expect(events.status).toBe(200);
      expect(events.body.total).toBeGreaterThan(0);
      expect(events.body.events.length).toBeLessThanOrEqual(5);

      const c = await cluster.waitFor(
        async () => {
          const r = await http<{ epoch: number; leader: { restUrl: string } | null; answeredBy: { leader: boolean } }>(
            `${standby}/cluster`,
          );
          return r.body.epoch > before && r.body.answeredBy.leader ? r.body : undefined;
        },
        30_000,
        'the standby to lead',
      );
      const sse2 = new SseClient(`${c.leader!.restUrl}/stream?job=${jobId}`);
      try {
        const rec = await sse2.next<{ recoveries: Json[] }>(
          'recoveries',
          (r) => r.recoveries.some((x) => (x.epoch as number) > before),
          60_000,
        );
        const row = rec.recoveries.find((x) => (x.epoch as number) > before)!;
        expect(row).toMatchObject({ restartedFromScratch: false });
        expect((row.tasks as Json).reused).toBeGreaterThanOrEqual(4);
        // keep-running-tasks: the count is always there (0 when nothing was adopted), for the dashboard.
        expect(typeof (row.tasks as Json).adopted).toBe('number');
        const phases = row.phases as Record<string, number>;
        expect(phases.electedAtMs).toBeGreaterThan(0);
        expect(phases.runningAtMs).toBeGreaterThanOrEqual(phases.replayFinishedAtMs!);
        const job = await sse2.next<Json>('job', (j) => (j.rebound as Json).leaderEpoch === c.epoch, 10_000);
        expect(job.jid).toBe(jobId);
      } finally {
        sse2.close();
      }
      await cluster.waitForJob(jobId, 90_000);
      const recoveries = await http<{ recoveries: Json[] }>(`${c.leader!.restUrl}/v1/jobs/${jobId}/recoveries`);
      expect(recoveries.body.recoveries.length).toBe(1);
      const metrics = (await http<string>(`${c.leader!.restUrl}/metrics`)).body;
      expect(metrics).toMatch(/^rebound_recoveries_total\{outcome="recovered",jobmaster_id="jm-\d"\} 1$/m);
      expect(metrics).toMatch(/^rebound_recovery_tasks_total\{outcome="reused",jobmaster_id="jm-\d"\} [1-9]/m);
      expect(metrics).toMatch(/^rebound_jobmaster_epoch\{jobmaster_id="jm-\d"\} [2-9]/m);
    } finally {
      sse.close();
    }
  });
});
