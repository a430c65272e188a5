/**
 * The compose failover scenario, for real, once per variant (compose.e2e.ts: the HA directory;
 * compose-etcd.e2e.ts: etcd through docker-compose.etcd.yml; compose-remote-shuffle.e2e.ts: the
 * shuffle workers). Starts the compose cluster (2 JobMasters, 3 TaskManagers, recovery on) under a
 * project name of its own, submits a slow wordcount through the `client` service, kills the
 * leading JobMaster's container by the name `rebound leader --id` prints, and checks that the job
 * finishes under the standby with the finished work reused, the running work adopted where the
 * variant keeps running tasks, and the output exact. The image is built once by global-setup.ts.
 *
 * Traffic goes only to the Docker engine's socket and to the containers and network the tests
 * create; nothing is pulled.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE, ROOT, baseImage, composeCommand, lastLine, log, run, since, type Run } from './docker.js';
import { expectKeptRunning, taskEventsOf } from './failover-checks.js';
import { RECORD_DELAY_MS, freePort, generateInput, readOutput, rest, tokenize } from './failover-job.js';

const TASK_MANAGERS = ['taskmanager-1', 'taskmanager-2', 'taskmanager-3'];
const DAEMONS = ['jobmaster-1', 'jobmaster-2', ...TASK_MANAGERS];

interface VertexJson {
  readonly id: string;
  readonly name: string;
  readonly parallelism: number;
  readonly tasks: { readonly finished: number };
}
interface RecoveryJson {
  readonly executionsRecovered: number;
  readonly executionsReset: number;
  readonly partitionsReused: number;
  readonly restartedFromScratch: boolean;
  readonly epoch: number;
  readonly runningTasksAdopted: number;
  readonly finishedTasksReported: number;
}
interface StatusJson {
  readonly jobId: string;
  readonly state: string;
  readonly vertices: readonly VertexJson[];
  readonly recoveries: readonly RecoveryJson[];
}
interface LeaderJson {
  readonly id: string;
  readonly address: string;
  readonly epoch: number;
  readonly serving: boolean;
}

/** What a variant's own tests get: the cluster's compose project, before and after `up`. */
export interface ComposeHarness {
  /** Environment of every compose command (data directory, image, published ports). */
  readonly env: NodeJS.ProcessEnv;
  /** Host directory mounted at /data. */
  readonly data: string;
  compose(args: readonly string[], timeoutMs?: number, extraEnv?: NodeJS.ProcessEnv): Promise<Run>;
}

export interface ComposeVariant {
  /** In the describe title and the project name. */
  readonly name: string;
  /** Compose files after docker-compose.yml. */
  readonly overrides: readonly string[];
  /** Services beyond the five daemons that must be healthy (etcd). */
  readonly extraServices: readonly string[];
  /** Tests run before the cluster is up: what goes wrong says so in one line. */
  readonly beforeUp: (h: () => ComposeHarness) => void;
  /** Checks after the failover, on the survivor (e.g. where the leader was recorded). */
  readonly afterFailover?: (h: ComposeHarness, survivor: string) => Promise<void>;
  /** Where the JobEventStore is in the containers (`rebound events --ha-dir`). */
  readonly eventsDir: string;
  /**
   * Kill, with the leader and in the same `kill`, the TaskManager on which most finished source
   * tasks ran (their partitions die with it unless something else keeps them).
   */
  readonly killBusiestTaskManager?: boolean;
  /**
   * execution.batch.job-recovery.keep-running-tasks of the job. True submits without the -D, so
   * the product's default (on) is what runs; false checks FLIP-383's replay report alone.
   */
  readonly keepRunningTasks: boolean;
  /** Further checks of the recovery report (camelCase, as `rebound status --json` prints it). */
  readonly checkReport?: (report: Record<string, unknown>) => void;
}

export function composeFailoverSuite(variant: ComposeVariant): void {
  /** Containers, network and volumes all carry this project name: the test's own. */
  const PROJECT = `rebound-e2e-${variant.name}-${process.pid}`;
  const SERVICES = [...DAEMONS, ...variant.extraServices];
  const files = ['docker-compose.yml', ...variant.overrides].flatMap((f) => ['-f', join(ROOT, f)]);

  describe(`docker compose (${variant.name} HA): submit through client, kill the leader, the job carries on`, () => {
    let composeCmd: string[];
    let data: string;
    let env: NodeJS.ProcessEnv;
    let restPorts: Record<string, number>;
    let up = false;
    let passed = false;

    const compose = (args: readonly string[], timeoutMs = 120_000, extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> =>
      run(
        composeCmd[0]!,
        [...composeCmd.slice(1), '-p', PROJECT, ...files, ...args],
        { ...env, ...extraEnv },
        timeoutMs,
      );
    const client = (args: readonly string[], timeoutMs = 120_000): Promise<Run> =>
      compose(['run', '--rm', '-T', 'client', ...args], timeoutMs);
    const harness = (): ComposeHarness => ({ env, data, compose });

    async function mustClient(args: readonly string[]): Promise<string> {
      const r = await client(args);
      if (r.code !== 0) throw new Error(`client ${args.join(' ')} exited ${r.code}: ${lastLine(r.stderr)}`);
      return r.stdout;
    }

    /** service -> "running healthy" etc., from the engine's view of this project's containers. */
    async function containerStates(): Promise<Map<string, string>> {
      const ids = (
        await run('docker', ['ps', '-aq', '--filter', `label=com.docker.compose.project=${PROJECT}`], env, 30_000)
      ).stdout
        .split('\n')
        .filter(Boolean);
      const states = new Map<string, string>();
      if (ids.length === 0) return states;
      const format =
        '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}-{{end}}';
      const r = await run('docker', ['inspect', '--format', format, ...ids], env, 30_000);
      for (const line of r.stdout.split('\n').filter(Boolean)) {
        const [service, ...rest] = line.split(' ');
        if (service !== 'client') states.set(service!, rest.join(' '));
      }
      return states;
    }

    /** Waits on the containers' healthchecks (the daemons' grpc.health.v1 services). */
    async function waitHealthy(timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await containerStates();
        if (SERVICES.every((s) => states.get(s) === 'running healthy')) return;
        const exited = [...states].filter(([, st]) => st.startsWith('exited'));
        if (exited.length > 0)
          throw new Error(`containers exited while starting: ${exited.map(([s, st]) => `${s} ${st}`).join(', ')}`);
        if (Date.now() > deadline)
          throw new Error(
            `not healthy within ${timeoutMs / 1000} s: ${[...states].map(([s, st]) => `${s}=${st}`).join(', ')}`,
          );
        await new Promise((r) => setTimeout(r, 1_000)); // the next look at the healthchecks
      }
    }

    beforeAll(async () => {
      composeCmd = await composeCommand();
      const base = await baseImage();
      data = mkdtempSync(join(tmpdir(), 'rebound-compose-data-'));
      // The containers run as the image's user (Dockerfile REBOUND_UID), not as root.
      if (process.getuid?.() === 0) chownSync(data, 10001, 10001);
      else chmodSync(data, 0o777);
      restPorts = { 'jobmaster-1': await freePort(), 'jobmaster-2': await freePort() };
      env = {
        ...process.env,
        REBOUND_DATA: data,
        REBOUND_BASE_IMAGE: base,
        REBOUND_IMAGE: IMAGE,
        REBOUND_NODE_MODULES: 'context',
        REBOUND_REST_PORT_1: String(restPorts['jobmaster-1']),
        REBOUND_REST_PORT_2: String(restPorts['jobmaster-2']),
      };
      log(
        `${composeCmd.join(' ')} ${files
          .filter((f) => f !== '-f')
          .map((f) => f.slice(ROOT.length + 1))
          .join(' ')}, image ${IMAGE}, project ${PROJECT}, data ${data}`,
      );
      const image = await run('docker', ['image', 'inspect', IMAGE], env, 30_000);
      if (image.code !== 0) throw new Error(`image ${IMAGE} missing: test/compose/global-setup.ts builds it`);
    });

    afterAll(async () => {
      if (up && !passed) log((await compose(['logs', '--tail', '40'], 60_000).catch(() => ({ stdout: '' }))).stdout);
      if (composeCmd) {
        const down = await compose(['down', '-v', '--remove-orphans'], 180_000);
        log(`down -v: exit ${down.code}`);
      }
      if (data) rmSync(data, { recursive: true, force: true });
    });

    variant.beforeUp(harness);

    it('runs a slow wordcount across the death of the leading JobMaster', async () => {
      const t0 = Date.now();
      const started = await compose(['up', '-d'], 300_000);
      if (started.code !== 0) throw new Error(`up failed: ${lastLine(started.stderr)}`);
      up = true;
      await waitHealthy(240_000);
      log(`cluster healthy ${since(t0)} after up`);

      const before = JSON.parse(await mustClient(['leader', '--json'])) as LeaderJson;
      expect(before.id).toMatch(/^jobmaster-[12]$/);
      expect(before).toMatchObject({ address: `${before.id}:6123`, serving: true });
      // The dashboard's REST API, published on the host's loopback: closed without the secret the
      // daemons created in the volume; with it, the leader's sees 3 TaskManagers.
      expect((await rest(restPorts[before.id]!, '/overview'))?.status).toBe(401);
      const secretRead = await compose(['exec', '-T', before.id, 'cat', '/rebound/secret'], 60_000);
      expect(secretRead.code).toBe(0);
      const secret = secretRead.stdout.trim();
      const overview = await rest(restPorts[before.id]!, '/overview', secret);
      expect(overview).toMatchObject({ status: 200, body: { taskmanagers: 3, 'slots-total': 6 } });
      // Not root (the Dockerfile's USER): a planted job or HA record acts with an unprivileged
      // user's rights. Both the user a shell gets and the daemon itself (PID 1, after exec).
      for (const service of ['jobmaster-1', 'taskmanager-1']) {
        const ids = await compose(['exec', '-T', service, 'sh', '-c', 'id -u; grep ^Uid: /proc/1/status'], 60_000);
        expect(ids.code).toBe(0);
        const [shell, daemon] = ids.stdout.trim().split('\n');
        expect(shell, `${service}: id -u`).toMatch(/^[1-9]\d*$/);
        // Uid: real, effective, saved, filesystem.
        expect(daemon, `${service}: PID 1`).toMatch(/^Uid:\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*$/);
      }

      const expected = generateInput(join(data, 'input'));
      const ownCount = new Map<string, number>();
      for (const name of readdirSync(join(data, 'input'))) {
        for (const w of tokenize(readFileSync(join(data, 'input', name), 'utf8')))
          ownCount.set(w, (ownCount.get(w) ?? 0) + 1);
      }
      expect(ownCount).toEqual(expected);

      const submitted = await mustClient([
        'submit',
        '--detached',
        '--json',
        ...(variant.keepRunningTasks ? [] : ['-D', 'execution.batch.job-recovery.keep-running-tasks=false']),
        'examples/wordcount.ts',
        '--',
        '--input',
        '/data/input',
        '--output',
        '/data/output',
        '--record-delay-ms',
        String(RECORD_DELAY_MS),
      ]);
      const { jobId } = JSON.parse(lastLine(submitted)) as { jobId: string };
      log(`submitted ${jobId}`);

      // `watch --json` in its own client container follows the job across the failover.
      const watcher = spawn(
        composeCmd[0]!,
        [...composeCmd.slice(1), '-p', PROJECT, ...files, 'run', '--rm', '-T', 'client', 'watch', jobId, '--json'],
        {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let last: StatusJson | undefined;
      let watchErr = '';
      let onStatus: ((s: StatusJson) => void) | undefined;
      let buffered = '';
      watcher.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines.filter((l) => l.startsWith('{'))) {
          last = JSON.parse(line) as StatusJson;
          onStatus?.(last);
        }
      });
      watcher.stderr.setEncoding('utf8').on('data', (chunk: string) => (watchErr += chunk));
      const watchExit = new Promise<number>((r) => watcher.on('close', (code) => r(code ?? -1)));

      // Asked while the job runs, not at the kill: a `client` run takes seconds on a loaded machine,
      // and nothing changes the leader until the kill.
      const victim = lastLine(await mustClient(['leader', '--id']));
      expect(victim).toBe(before.id);

      const source = (s: StatusJson): VertexJson => s.vertices.find((v) => v.name.startsWith('Source'))!;
      const halfDone = (s: StatusJson): boolean =>
        source(s).parallelism > 0 && source(s).tasks.finished >= source(s).parallelism / 2;
      await new Promise<void>((done, fail) => {
        const timer = setTimeout(
          () =>
            fail(new Error(`half the source tasks did not finish within 5 min; last status: ${JSON.stringify(last)}`)),
          5 * 60_000,
        );
        onStatus = (s) => {
          if (halfDone(s)) {
            clearTimeout(timer);
            onStatus = undefined;
            done();
          }
        };
        if (last) onStatus(last);
        void watchExit.then((code) =>
          fail(new Error(`watch ended (exit ${code}) before half the sources finished: ${lastLine(watchErr)}`)),
        );
      });
      const atKill = source(last!);
      // What a SIGKILL loses of the event buffer (job-event.store.write-buffer.flush-interval)
      // reruns, as FLIP-383 has it: the kill waits until the finished sources are in the log, so
      // that "nothing durable ran again" is what the recovery report can be held to. Keeping
      // running tasks, the TaskManagers also hold what finished and report it to the next leader,
      // so there the kill does not wait and nothing finished may run again, logged or not; unless
      // a TaskManager dies too, taking what it held (then its finished sources must be logged).
      const awaitLog = !variant.keepRunningTasks || variant.killBusiestTaskManager === true;
      const durable = async (): Promise<number> => {
        const out = await mustClient(['events', jobId, '--json', '--ha-dir', variant.eventsDir]);
        const dump = JSON.parse(out.slice(out.indexOf('{'))) as {
          events: { type: string; event: { vertex_id?: string; location?: { task_manager_id?: string } } }[];
        };
        const finished = dump.events.filter(
          (e) => e.type === 'ExecutionVertexFinished' && e.event.vertex_id === atKill.id,
        );
        const perTm = new Map<string, number>();
        for (const e of finished) {
          const tm = e.event.location?.task_manager_id ?? '';
          perTm.set(tm, (perTm.get(tm) ?? 0) + 1);
        }
        busiest = [...perTm].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
        return finished.length;
      };
      let busiest: string | undefined;
      let inLog = 0;
      for (const deadline = Date.now() + 120_000; awaitLog && (inLog = await durable()) < atKill.tasks.finished;) {
        if (Date.now() > deadline)
          throw new Error(`${atKill.tasks.finished} source tasks finished, ${inLog} of them in the event log`);
      }
      const alsoKilled = variant.killBusiestTaskManager && busiest ? [busiest] : [];
      if (variant.killBusiestTaskManager) expect(alsoKilled).toHaveLength(1);
      const killed = await compose(['kill', victim, ...alsoKilled], 60_000);
      expect(killed.code).toBe(0);
      const tKill = Date.now();
      log(
        `killed ${[victim, ...alsoKilled].join(' and ')} with ${atKill.tasks.finished}/${atKill.parallelism} source tasks finished${awaitLog ? `, ${inLog} in the event log` : ' (event log not awaited)'}`,
      );

      const code = await Promise.race([
        watchExit,
        new Promise<number>((_, fail) =>
          setTimeout(
            () => fail(new Error(`the job did not end within 6 min of the kill; last status: ${JSON.stringify(last)}`)),
            6 * 60_000,
          ),
        ),
      ]);
      expect(code, `watch: ${lastLine(watchErr)}`).toBe(0);
      log(`FINISHED ${since(tKill)} after the kill`);
      const final = last!;
      expect(final.state).toBe('FINISHED');
      expect(final.recoveries.length).toBe(1);
      const report = final.recoveries[0]!;
      log(`recovery report: ${JSON.stringify(report)}`);
      expect(report.restartedFromScratch).toBe(false);
      if (variant.keepRunningTasks)
        expectKeptRunning(report, {
          events: await taskEventsOf(PROJECT, env, TASK_MANAGERS),
          jobId,
          sourceId: atKill.id,
          oldEpoch: before.epoch,
          killed: alsoKilled,
          killedAtMs: tKill,
          finishedAtKill: Math.max(inLog, atKill.tasks.finished),
        });
      else expect(report.executionsRecovered).toBeGreaterThanOrEqual(inLog);
      expect(report.partitionsReused).toBeGreaterThan(0);
      expect(report.epoch).toBeGreaterThan(before.epoch);
      variant.checkReport?.(report as unknown as Record<string, unknown>);
      expect((await containerStates()).get(victim)).toMatch(/^exited/);

      const after = JSON.parse(await mustClient(['leader', '--json'])) as LeaderJson;
      expect(after.id).not.toBe(victim);
      expect(after).toMatchObject({ epoch: report.epoch, serving: true });
      // The survivor's published REST API tells the same story: FINISHED, one recovery.
      const job = await rest(restPorts[after.id]!, `/jobs/${jobId}`, secret);
      expect(job).toMatchObject({ status: 200, body: { jid: jobId, state: 'FINISHED' } });
      const recoveries = await rest(restPorts[after.id]!, `/jobs/${jobId}/recoveries`, secret);
      expect(recoveries?.status).toBe(200);
      expect(JSON.stringify(recoveries?.body)).toContain(`"epoch":${report.epoch}`);

      await variant.afterFailover?.(harness(), after.id);

      expect(readOutput(join(data, 'output'))).toEqual(expected);
      passed = true;
    });
  });
}
