import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchBrowser } from './browser.js';
import { LocalCluster, suiteFailed, waitFor } from './harness.js';
import { HISTOGRAM_JOB, histogramArgs } from './recovery-util.js';
import { makeTempDir } from './util.js';

/**
 * The dashboard in a real headless chromium: a job page keeps updating through a SIGKILL of the
 * leader that served it, without a reload, and shows the new epoch and the recovery row, with the
 * running tasks the new leader adopted (keep-running-tasks on for this job).
 * Skipped when no chromium is installed (.ci/run installs it and runs this file).
 */
/** Polls the text of the first element matching `selector` until `pred` holds (no DOM types here). */
async function waitText(
  page: Page,
  selector: string,
  pred: (text: string) => boolean,
  timeoutMs: number,
): Promise<string> {
  return waitFor(
    async () => {
      const t =
        (await page
          .locator(selector)
          .first()
          .textContent({ timeout: 1000 })
          .catch(() => null)) ?? undefined;
      return t !== undefined && pred(t) ? t : undefined;
    },
    timeoutMs,
    `${selector} to match`,
    { intervalMs: 100 },
  );
}

describe.skipIf(!HAVE_CHROMIUM)('dashboard in a browser', () => {
  let cluster: LocalCluster;
  let browser: BrowserContext;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      // The remote shuffle: the overview shows its worker, and the recovery reuses what it keeps.
      shuffleWorkers: 1,
      config: {
        'shuffle.type': 'remote',
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'rest.stream.min-interval': '200 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
    browser = await launchBrowser();
    data = await makeTempDir('rebound-it-dashboard-');
  });

  afterAll(async ({}, suite) => {
    await browser?.close();
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('shows the new epoch and the recovery row after the leader is killed, without a reload', async () => {
    const leader = (await cluster.leader())!;
    const leaderUrl = (await cluster.process(leader.jobmasterId)).restUrl!;
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 4000, keys: 97, output: join(data, 'out'), reduceDelayMs: 10 }),
      {
        // keep-running-tasks on: the reducers running at the kill carry on, and the recovery row counts them.
        config: {
          'taskmanager.network.combiner.max-keys': '0',
          'execution.batch.job-recovery.keep-running-tasks': 'true',
        },
      },
    );
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    // The page is served by the leader that is about to die.
    // As a person opens the link `local up` prints: ?token= once, a cookie from then on, also for
    // the other JobMaster the page moves to when this one dies.
    await page.goto(`${leaderUrl}/${cluster.security().dashboardQuery()}#/jobs/${jobId}`);
    await page.locator('[data-testid=dag-vertex]').nth(2).waitFor({ timeout: 30_000 });
    // What the browser holds: a session cookie the page's scripts cannot read, not the secret;
    // and the secret is gone from the address bar (and so from the history).
    const secret = cluster.security().httpHeaders().authorization!.slice('Bearer '.length);
    expect(page.url()).not.toContain('token=');
    expect(page.url()).toContain(`#/jobs/${jobId}`);
    expect(await page.evaluate('document.cookie')).toBe('');
    const cookies = await browser.cookies(leaderUrl);
    expect(cookies.map((c) => c.name)).toEqual([expect.stringMatching(/^rebound_session_[0-9a-f]{12}$/)]);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookies[0]!.expires * 1000).toBeGreaterThan(Date.now());
    expect(cookies[0]!.value).not.toContain(secret);
    expect(await page.locator('[data-testid=leader-epoch]').textContent()).toBe(String(leader.epoch));
    await waitText(page, '[data-testid=connection]', (t) => t.startsWith('live'), 15_000);
    await page.evaluate('window.reboundMarker = 42');

    await cluster.waitFor(
      async () => (await cluster.status(jobId)).vertices[0]?.state === 'FINISHED',
      60_000,
      'the sources to finish',
    );
    // Live per-vertex progress: the page shows the finished source without a reload.
    await waitText(page, '[data-testid=dag-vertex]', (t) => /(\d+)\/\1 finished/.test(t), 15_000);
    // The kill finds reducers running (10 ms per call): those are the tasks the next leader adopts.
    await cluster.waitFor(
      async () => ((await cluster.status(jobId)).vertices[1]?.tasks.running ?? 0) > 0,
      60_000,
      'a reducer to run',
    );
    await cluster.killLeader();

    const epoch = await cluster.waitFor(
      async () => {
        const l = await cluster.leader();
        return l && l.epoch > leader.epoch ? l.epoch : undefined;
      },
      30_000,
      'a new leader',
    );
    await waitText(page, '[data-testid=leader-epoch]', (t) => t === String(epoch), 30_000);
    await page.locator(`[data-testid=recovery-row][data-epoch="${epoch}"]`).waitFor({ timeout: 60_000 });
    const row = (await page.locator(`[data-testid=recovery-row][data-epoch="${epoch}"]`).textContent()) ?? '';
    expect(row).toMatch(/recovered \(FLIP-383\)/);
    expect(row).toMatch(/tasks reused [1-9]/);
    expect(
      await page
        .locator(`[data-testid=recovery-row][data-epoch="${epoch}"] [data-testid=recovery-adopted]`)
        .textContent(),
    ).toMatch(/^running tasks adopted [1-9]/);
    await waitText(page, '[data-testid=job-epoch]', (t) => t === String(epoch), 30_000);
    // Same document: no reload happened.
    expect(await page.evaluate('window.reboundMarker')).toBe(42);
    await cluster.waitForJob(jobId, 90_000);
    await page.locator('h2 .state.FINISHED').waitFor({ timeout: 30_000 });
    expect(problems).toEqual([]);
  });

  it('shows the shuffle worker with the partitions it holds, gone when killed, back when restarted', async () => {
    const leader = (await cluster.leader())!;
    const url = (await cluster.process(leader.jobmasterId)).restUrl!;
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${url}/${cluster.security().dashboardQuery()}#/`);
    const row = '[data-testid=shuffle-worker-row]';
    await waitText(page, row, (t) => t.startsWith('sw-1') && t.includes('registered'), 30_000);
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: 3000, keys: 97, output: join(data, 'worker-card'), reduceDelayMs: 5 }),
      { config: { 'taskmanager.network.combiner.max-keys': '0' } },
    );
    // The finished sources' partitions, as the worker's heartbeats report them.
    await waitText(page, row, (t) => /registered[1-9]\d* \(\d/.test(t), 60_000);
    await cluster.kill('sw-1', 'SIGKILL');
    await waitText(page, row, (t) => t.includes('gone'), 30_000);
    await cluster.startShuffleWorker({ id: 'sw-1' });
    await waitText(page, row, (t) => t.includes('registered') && !t.includes('gone'), 30_000);
    await cluster.waitForJob(jobId, 120_000);
    expect(problems).toEqual([]);
  });
});
