/**
 * Regenerates docs/dashboard.png from a real run: starts a local cluster, submits a job with a
 * slow middle stage, opens its page in a headless installed chromium, SIGKILLs the leader, waits for
 * the new leader's recovery row, and takes the screenshot. Loopback only; nothing is downloaded.
 *
 *   node --import tsx scripts/dashboard-screenshot.ts [--out docs/dashboard.png]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.REBOUND_CHROMIUM ?? '/usr/bin/chromium';
const outArg = process.argv.indexOf('--out');
const OUT = resolve(ROOT, outArg > 0 ? process.argv[outArg + 1]! : 'docs/dashboard.png');

function rebound(args: string[]): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'rebound.js'), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) =>
      code === 0 ? res(out) : rej(new Error(`rebound ${args.join(' ')} exited ${code}: ${err || out}`)),
    );
  });
}

async function until<T>(what: string, timeoutMs: number, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium`);
  const work = await mkdtemp(join(tmpdir(), 'rebound-screenshot-'));
  const defines = {
    'execution.batch.job-recovery.enabled': 'true',
    'heartbeat.interval': '200 ms',
    'heartbeat.timeout': '2 s',
    'high-availability.lease.timeout': '1 s',
    'high-availability.lease.renew-interval': '200 ms',
    'high-availability.lease.poll-interval': '100 ms',
    'job-event.store.write-buffer.flush-interval': '50 ms',
    'taskmanager.network.block-size': '128 b',
  };
  const d = Object.entries(defines).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1150 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    await rebound(['local', 'up', '--workdir', work, '--jobmasters', '2', '--taskmanagers', '3', '--slots', '2', ...d]);
    const cluster = JSON.parse(await readFile(join(work, 'cluster.json'), 'utf8')) as {
      processes: { id: string; restUrl?: string }[];
    };
    const leader = JSON.parse(await readFile(join(work, 'ha', 'leader.json'), 'utf8')) as {
      jobmasterId: string;
      epoch: number;
    };
    const url = cluster.processes.find((p) => p.id === leader.jobmasterId)!.restUrl!;
    // The cluster secret `local up` wrote: the page opens with ?token= (it keeps a cookie), fetches send it.
    const secret = (await readFile(join(work, 'secret'), 'utf8')).trim();
    const auth = { authorization: `Bearer ${secret}` };
    const submitted = await rebound([
      'submit',
      '--cluster',
      work,
      'test/fixtures/histogram.ts',
      '--json',
      '--detached',
      '-D',
      'taskmanager.network.combiner.max-keys=0',
      '--',
      '--records',
      '3000',
      '--keys',
      '97',
      '--output',
      join(work, 'out'),
      '--reduce-delay-ms',
      '10',
      '--splits',
      '6',
    ]);
    const jobId = (JSON.parse(submitted.split('\n')[0]!) as { jobId: string }).jobId;
    const page = await context.newPage();
    await page.goto(`${url}/?token=${secret}#/jobs/${jobId}`);
    await page.locator('[data-testid=dag-vertex]').nth(2).waitFor({ timeout: 30_000 });
    await until('the sources to finish', 60_000, async () => {
      const job = (await (await fetch(`${url}/jobs/${jobId}`, { headers: auth })).json()) as {
        vertices: { status: string }[];
      };
      return job.vertices[0]?.status === 'FINISHED' ? true : undefined;
    });
    await rebound(['local', 'kill-leader', '--workdir', work]);
    const next = await until('a new leader', 30_000, async () => {
      const l = JSON.parse(await readFile(join(work, 'ha', 'leader.json'), 'utf8')) as { epoch: number };
      return l.epoch > leader.epoch ? l.epoch : undefined;
    });
    await page.locator(`[data-testid=recovery-row][data-epoch="${next}"]`).waitFor({ timeout: 60_000 });
    // Let the DAG show the rerun progressing under the new leader.
    await page.waitForTimeout(1500);
    await mkdir(dirname(OUT), { recursive: true });
    await page.screenshot({ path: OUT, fullPage: true });
    process.stdout.write(`wrote ${OUT} (job ${jobId}, epoch ${leader.epoch} -> ${next})\n`);
  } finally {
    await context.close();
    await rebound(['local', 'down', '--workdir', work]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`dashboard-screenshot: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
