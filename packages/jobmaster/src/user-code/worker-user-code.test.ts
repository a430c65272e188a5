import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleJobModule } from '@rebound/api';
import { Configuration, ErrorCode, silentLogger } from '@rebound/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserCodeWorkers } from './user-code-workers.js';
import type { WorkerUserCode } from './worker-user-code.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const MODULES: Record<string, string> = {
  'poison-job.ts': 'test/fixtures/poison-job.ts',
  'poison-runtime.ts': 'packages/chaos/src/jobs/poison-runtime.ts',
};

/**
 * A job's user code runs in a worker thread of its own: whatever a module, an enumerator or a
 * coordinator does there (exit, throw, hang, loop, allocate) ends its job, never this process.
 */
describe('WorkerUserCode', () => {
  let dir: string;
  const modules: Record<string, string> = {};
  const workers = new UserCodeWorkers();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-user-code-test-'));
    for (const name of ['poison-job.ts', 'poison-runtime.ts']) {
      modules[name] = join(dir, name.replace('.ts', '.mjs'));
      await writeFile(modules[name], (await bundleJobModule(join(REPO, MODULES[name]!))).code);
    }
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const start = (name: string, args: string[], config: Record<string, string> = {}) =>
    workers.start({
      jobId: 'j1',
      modulePath: modules[name]!,
      args,
      cwd: dir,
      jobConfig: Configuration.of({ 'jobmaster.job-module.load-timeout': '20 s', ...config }),
      logger: silentLogger(),
    });
  const load = (poison: string, config: Record<string, string> = {}) =>
    start('poison-job.ts', ['--poison', poison, '--input', dir, '--output', join(dir, 'out')], config);

  describe('loading the module', () => {
    it('loads a module that builds, and one that exits only on a JobMaster main thread', async () => {
      for (const poison of ['none', 'exit-main']) {
        const code = await load(poison);
        expect(code.operator('op-1')).toMatchObject({ kind: 'source' });
        await code.close();
      }
    });

    it('fails a module that exits its process, without this process exiting', async () => {
      await expect(load('exit')).rejects.toMatchObject({
        code: ErrorCode.JOB_MODULE_INVALID,
        message: expect.stringMatching(/exited its process \(exit code 7\) while loading/),
      });
    });

    it('fails a module that signals its own process or aborts it: the worker ends, not this process', async () => {
      await expect(load('kill-self')).rejects.toMatchObject({
        code: ErrorCode.JOB_MODULE_INVALID,
        message: expect.stringMatching(/called process\.kill\(its own process, SIGKILL\) while loading/),
      });
    });

    it('fails a module that throws while it builds, with its message', async () => {
      await expect(load('throw')).rejects.toMatchObject({
        code: ErrorCode.JOB_MODULE_INVALID,
        message: expect.stringMatching(/poisoned while building/),
      });
    });

    it('ends a module that never finishes loading at the load timeout', async () => {
      await expect(load('hang', { 'jobmaster.job-module.load-timeout': '500 ms' })).rejects.toMatchObject({
        code: ErrorCode.JOB_MODULE_INVALID,
        message: expect.stringMatching(/did not finish loading within 500 ms \(jobmaster\.job-module\.load-timeout\)/),
      });
    });
  });

  describe('running its enumerator and coordinator', () => {
    const SOURCE = 'op-1';
    const COORDINATED = 'op-2';

    const holderOf = (code: WorkerUserCode) =>
      code.createCoordinatorHolder({
        vertexId: 'v-op-1',
        operatorId: COORDINATED,
        operatorName: 'Add offset',
        parallelism: 1,
        maxHeldResponses: 10,
      });

    async function runtime(
      poison: string,
      config: Record<string, string> = {},
    ): Promise<{ code: WorkerUserCode; failed: Promise<string> }> {
      const code = await start('poison-runtime.ts', ['--poison', poison, '--output', join(dir, 'out')], {
        'jobmaster.user-code.call-timeout': '1 s',
        'jobmaster.user-code.heap-size': '64 mb',
        ...config,
      });
      const failed = new Promise<string>((resolve) => code.onFailure(resolve));
      return { code, failed };
    }

    it('serves a healthy job: splits, a coordinator answer, snapshots', async () => {
      const { code } = await runtime('none');
      expect(code.operator(SOURCE)).toMatchObject({ kind: 'source' });
      expect(code.operator(COORDINATED)).toMatchObject({ kind: 'process', hasCoordinator: true });
      expect(code.estimateSplits(SOURCE)).toBe(2);
      const source = code.createSourceCoordinator(SOURCE, 'Source', 1);
      await source.start();
      expect(await source.requestSplit(0, 0)).toMatchObject({ split: { id: expect.any(String) } });
      expect(source.supportsBatchSnapshot()).toBe(true);
      expect(source.snapshotNow()).toBeInstanceOf(Uint8Array);
      const holder = holderOf(code);
      await holder.start();
      expect(await holder.handleRequest(0, 0, '{}')).toBe('1000');
      // A user failure comes back as the error it was, not as a dead worker.
      await expect(source.requestSplit(5, 0)).rejects.toThrow(/no subtask 5/);
      expect(() => source.subtaskReset(7, 1)).toThrow(/no subtask 7/);
      expect(code.isAlive()).toBe(true);
      await code.close();
    });

    it.each([
      ['timer-throw', /crashed: .*chaos poison: the enumerator threw from a timer/, {}],
      ['split-exit', /called process\.exit\(3\)/, {}],
      // A worker near its heap limit collects without pause and answers no ping: on a loaded machine
      // the watchdog's 1 s came first (seen in CI), so this case gives the heap the time to run out.
      [
        'split-alloc',
        /ran out of its heap \(jobmaster\.user-code\.heap-size 64 MiB\)/,
        { 'jobmaster.user-code.call-timeout': '20 s' },
      ],
    ])('%s: the job fails with the reason, and this process lives', async (poison, reason, config) => {
      const { code, failed } = await runtime(poison, config);
      const source = code.createSourceCoordinator(SOURCE, 'Source', 1);
      await source.start();
      if (poison !== 'timer-throw') await expect(source.requestSplit(0, 0)).rejects.toThrow(reason);
      expect(await failed).toMatch(reason);
      expect(code.isAlive()).toBe(false);
      await expect(source.requestSplit(0, 0)).rejects.toThrow(/its user code on the JobMaster/);
      expect(() => source.subtaskReset(0, 1)).toThrow(/its user code on the JobMaster/);
      await source.close();
      await code.close();
    });

    it('a JobMaster thread that did not run for longer than the call timeout keeps a healthy worker', async () => {
      const { code } = await runtime('none');
      await new Promise((r) => setTimeout(r, 300));
      // As a SIGSTOP or a starved JobMaster: this thread runs nothing for 2.5 call timeouts.
      const until = Date.now() + 2_500;
      while (Date.now() < until) {
        // busy
      }
      await new Promise((r) => setTimeout(r, 1_500));
      expect(code.isAlive()).toBe(true);
      expect(code.estimateSplits(SOURCE)).toBe(2);
      await code.close();
    });

    it('coordinator-loop: a call this thread waits on gives up at its deadline, with the worker', async () => {
      const { code, failed } = await runtime('coordinator-loop', { 'high-availability.lease.timeout': '900 ms' });
      const holder = holderOf(code);
      await holder.start();
      const request = holder.handleRequest(0, 0, '{}');
      const t0 = Date.now();
      // A third of the lease, not the 1 s call timeout.
      expect(() => holder.subtaskReset(0, 1)).toThrow(/did not return from subtaskReset within 300 ms/);
      expect(Date.now() - t0).toBeLessThan(900);
      await expect(request).rejects.toThrow(/its user code on the JobMaster/);
      expect(await failed).toMatch(/an endless loop/);
      await code.close();
    });

    it('coordinator-loop: a coordinator in an endless loop is ended at the call timeout', async () => {
      const { code, failed } = await runtime('coordinator-loop');
      const holder = holderOf(code);
      await holder.start();
      const request = holder.handleRequest(0, 0, '{}');
      await expect(request).rejects.toThrow(
        /stopped answering for \d+ ms \(jobmaster\.user-code\.call-timeout 1000 ms\)/,
      );
      expect(await failed).toMatch(/an endless loop/);
      await code.close();
    });
  });
});
