import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleJobModule } from '@rebound/api';
import { ErrorCode } from '@rebound/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobModuleProbe } from './job-module-probe.js';

const POISON_JOB = fileURLToPath(new URL('../../../test/fixtures/poison-job.ts', import.meta.url));

describe('JobModuleProbe', () => {
  let dir: string;
  let modulePath: string;
  const probe = new JobModuleProbe();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-probe-test-'));
    modulePath = join(dir, 'module.mjs');
    await writeFile(modulePath, (await bundleJobModule(POISON_JOB)).code);
  });

  afterAll(async () => {
    await probe.close();
    await rm(dir, { recursive: true, force: true });
  });

  const check = (poison: string, timeoutMs = 20_000) =>
    probe.check({
      jobId: 'j1',
      modulePath,
      args: ['--poison', poison, '--input', dir, '--output', join(dir, 'out')],
      cwd: dir,
      timeoutMs,
    });

  it('passes a module that loads and builds (and one that only exits on a main thread)', async () => {
    await check('none');
    await check('exit-main');
  });

  it('fails a module that exits its process, without this process exiting', async () => {
    await expect(check('exit')).rejects.toMatchObject({
      code: ErrorCode.JOB_MODULE_INVALID,
      message: expect.stringMatching(/exited its process \(exit code 7\) while loading/),
    });
  });

  it('fails a module that throws while it builds, with its message', async () => {
    await expect(check('throw')).rejects.toMatchObject({
      code: ErrorCode.JOB_MODULE_INVALID,
      message: expect.stringMatching(/poisoned while building/),
    });
  });

  it('ends a module that never finishes loading at the load timeout', async () => {
    await expect(check('hang', 500)).rejects.toMatchObject({
      code: ErrorCode.JOB_MODULE_INVALID,
      message: expect.stringMatching(/did not finish loading within 500 ms \(jobmaster\.job-module\.load-timeout\)/),
    });
  });
});
