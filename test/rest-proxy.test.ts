import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed, waitFor } from './harness.js';
import { HISTOGRAM_JOB, histogramArgs } from './recovery-util.js';
import { SseClient, http, useCredentials } from './rest-util.js';
import { makeTempDir } from './util.js';

type Json = Record<string, unknown>;

const PROXY_TIMEOUT_MS = 1000;

/** A document without the fields that are the answering moment (`now`), to compare two answers. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Json)
      .filter(([k]) => k !== 'now' && k !== 'timeSinceLastHeartbeat')
      .map(([k, v]) => [k, stable(v)]),
  );
}

/**
 * Any JobMaster answers the API (issue 23, item 4): a standby proxies reads to the leader with
 * its own membership, browsers are redirected, writes name the leader, a proxied request never
 * takes a second hop, and while no leader answers (paused, or dead until its lease ends) the job
 * documents come from the HA store, marked as such, and the rest is a 503 with its reason.
 */
describe('REST API through a standby', () => {
  let cluster: LocalCluster;
  let data: string;
  let jobId: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 1,
      slots: 2,
      config: {
        'rest.proxy.timeout': `${PROXY_TIMEOUT_MS} ms`,
        // Long enough that a paused or killed leader is still the one the HA store names while
        // the test asks the standby.
        'high-availability.lease.timeout': '6 s',
        'heartbeat.timeout': '10 s',
      },
    });
    data = await makeTempDir('rebound-it-rest-proxy-');
    useCredentials(cluster.security().httpHeaders());
    ({ jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 300, keys: 10, output: join(data, 'out') }),
    ));
    await cluster.waitForJob(jobId, 60_000);
  });

  afterAll(async ({}, suite) => {
    useCredentials({});
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function urls(): Promise<{ leader: string; standby: string; leaderId: string; standbyId: string }> {
    const leader = await cluster.leader();
    const jms = (await cluster.processes()).filter((p) => p.role === 'jobmaster' && p.restUrl);
    const l = jms.find((p) => p.id === leader?.jobmasterId);
    const s = jms.find((p) => p.id !== leader?.jobmasterId);
    if (!l?.restUrl || !s?.restUrl) throw new Error(`no restUrl in cluster.json: ${JSON.stringify(jms)}`);
    return { leader: l.restUrl, standby: s.restUrl, leaderId: l.id, standbyId: s.id };
  }

  it("answers every read with the leader's answer, with the caller's secret and no redirect", async () => {
    const { leader, standby } = await urls();
    for (const path of ['/overview', '/jobs', '/jobs/overview', `/jobs/${jobId}`, `/v1/jobs/${jobId}/exceptions`]) {
      const [a, b] = await Promise.all([http(`${leader}${path}`), http(`${standby}${path}`, { redirect: 'manual' })]);
      expect([path, b.status]).toEqual([path, 200]);
      expect(a.status).toBe(200);
      expect(stable(b.body)).toEqual(stable(a.body));
      expect(b.headers.get('content-type')).toMatch(/^application\/json/);
      expect(b.headers.get('set-cookie')).toBeNull();
    }
    const tms = await http<{ taskmanagers: Json[] }>(`${standby}/taskmanagers`);
    expect(tms.status).toBe(200);
    expect(tms.body.taskmanagers).toHaveLength(1);
    // A missing job is the leader's 404, passed on.
    const missing = await http<{ errors: string[] }>(`${standby}/jobs/${'0'.repeat(32)}`);
    expect(missing.status).toBe(404);
    // The standby checks the caller's secret itself; without it nothing is proxied.
    const anonymous = await fetch(`${standby}/jobs/overview`, { signal: AbortSignal.timeout(10_000) });
    expect(anonymous.status).toBe(401);
    // Its metrics stay its own: Prometheus scrapes each JobMaster.
    const { standbyId } = await urls();
    expect((await http<string>(`${standby}/metrics`)).body).toMatch(
      new RegExp(`^rebound_jobmaster_leader\\{jobmaster_id="${standbyId}"\\} 0$`, 'm'),
    );
  });

  it('redirects browsers, names the leader for a write, and never proxies twice', async () => {
    const { leader, standby, leaderId, standbyId } = await urls();
    const browser = await http(`${standby}/jobs/overview`, {
      redirect: 'manual',
      headers: { 'sec-fetch-site': 'same-site' },
    });
    expect(browser.status).toBe(307);
    expect(browser.headers.get('location')).toBe(`${leader}/jobs/overview`);

    const write = await http<{ errors: string[] }>(`${standby}/jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
    expect(write.status).toBe(421);
    expect(write.body.errors).toEqual([
      `JobMaster ${standbyId} is a standby and proxies reads only: send PATCH /jobs/${jobId} to the leader ${leaderId} at ${leader}`,
    ]);

    const loop = await http<{ errors: string[] }>(`${standby}/jobs/overview`, {
      headers: { 'x-rebound-proxied-by': 'jm-elsewhere' },
    });
    expect(loop.status).toBe(503);
    expect(loop.body.errors).toEqual([
      `JobMaster ${standbyId} got GET /jobs/overview proxied by jm-elsewhere but is not the leader (leadership is changing); retry shortly`,
    ]);
  });

  it('proxies the live stream', async () => {
    const { standby } = await urls();
    const sse = new SseClient(`${standby}/stream?job=${jobId}`);
    try {
      await waitFor(() => sse.events.some((e) => e.event === 'job'), 20_000, 'a job event through the standby');
    } finally {
      sse.close();
    }
  });

  it('answers from the HA store while no leader answers: paused, then dead until its lease ends', async () => {
    const { standby, leaderId, leader } = await urls();
    // The oracle: what the leader itself answered while it led.
    const led = await http<Json>(`${leader}/jobs/${jobId}`);
    expect(led.status).toBe(200);
    // A paused leader accepts the connection and never answers.
    await cluster.signal(leaderId, 'SIGSTOP');
    let paused;
    let tms;
    const t0 = performance.now();
    try {
      paused = await http<Json>(`${standby}/jobs/overview`, { timeoutMs: 30_000 });
      tms = await http<{ errors: string[] }>(`${standby}/taskmanagers`, { timeoutMs: 30_000 });
    } finally {
      await cluster.signal(leaderId, 'SIGCONT');
    }
    const elapsed = performance.now() - t0;
    expect(paused.status).toBe(200);
    expect(paused.body.answeredFrom).toMatchObject({
      source: 'ha-store',
      reason: `the leader ${leaderId} at ${leader} did not answer within 1 s (rest.proxy.timeout)`,
    });
    expect((paused.body.jobs as Json[]).map((j) => [j.jid, j.state])).toEqual([[jobId, 'FINISHED']]);
    // What only the leader knows (registrations) is a 503 naming the reason.
    expect(tms.status).toBe(503);
    expect(tms.body.errors[0]).toMatch(
      new RegExp(
        `^JobMaster jm-\\d is a standby and proxied GET /taskmanagers to the leader ${leaderId} at ${leader}, which did not answer within 1 s \\(rest.proxy.timeout\\); retry shortly`,
      ),
    );
    expect(elapsed).toBeGreaterThanOrEqual(2 * PROXY_TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(2 * PROXY_TIMEOUT_MS + 5_000);

    // A dead leader that the HA store still names (its lease runs 6 s): as curl would ask, with
    // the secret and nothing else, the standby answers from the HA store at once.
    await cluster.kill(leaderId);
    const curl = async (path: string): Promise<{ status: number; body: Json; from: string | null }> => {
      const res = await fetch(`${standby}${path}`, {
        headers: { authorization: cluster.security().httpHeaders().authorization! },
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: (await res.json()) as Json, from: res.headers.get('x-rebound-answered-from') };
    };
    const list = await curl('/jobs');
    expect([list.status, list.body.jobs]).toEqual([200, [{ id: jobId, status: 'FINISHED' }]]);
    expect(list.body.answeredFrom).toMatchObject({
      source: 'ha-store',
      // A connection the standby had open is reset; a new one is refused.
      reason: expect.stringMatching(
        new RegExp(`^the leader ${leaderId} at ${leader} could not be reached \\((ECONNREFUSED|ECONNRESET)\\)$`),
      ),
    });
    const asOfMs = (list.body.answeredFrom as { asOfMs: number }).asOfMs;
    expect(list.from).toBe(`ha-store; as-of=${new Date(asOfMs).toISOString()}`);
    const job = await curl(`/jobs/${jobId}`);
    expect(job.status).toBe(200);
    const { answeredFrom, ...fromStore } = job.body;
    expect(answeredFrom).toMatchObject({ source: 'ha-store' });
    expect(stable(fromStore)).toEqual(stable(led.body));
    expect((await curl('/overview')).body).toMatchObject({ 'jobs-finished': 1, 'jobs-running': 0 });

    // Once it leads, the former standby answers by itself.
    await waitFor(async () => (await cluster.leader())?.jobmasterId !== leaderId, 60_000, 'the standby to take over');
    await waitFor(
      async () => (await http(`${standby}/jobs/${jobId}`)).status === 200,
      30_000,
      'the new leader to answer',
    );
    expect((await curl(`/jobs/${jobId}`)).from).toBeNull();
  });
});
