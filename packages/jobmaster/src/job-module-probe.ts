import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { bundleJobModule } from '@rebound/api';
import { ErrorCode, ReboundError, JobModuleInvalidError } from '@rebound/core';

/** A job module that exits, throws or hangs while it loads: the job fails, the JobMaster lives. */
export class PoisonJobModuleError extends ReboundError {
  constructor(jobId: string, reason: string) {
    super(ErrorCode.JOB_MODULE_INVALID, `job ${jobId}: the job module ${reason}; it was not loaded into the JobMaster`);
  }
}

export interface ProbeOptions {
  readonly jobId: string;
  readonly modulePath: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  /** `jobmaster.job-module.load-timeout`. */
  readonly timeoutMs: number;
}

type ProbeMessage = { ok: true } | { ok: false; message: string };

/** Heap of the probe's worker: a module that allocates without bound fails there, not here. */
const PROBE_HEAP_MB = 512;

/**
 * Loads a job module in a worker thread before the JobMaster imports it into its own isolate. Job
 * code is trusted code (as in Flink), but a careless module (`process.exit()` at load time, an
 * endless loop, a throw) must not take the leader down, and then its standby, job after job.
 * `process.exit()` in a worker ends only the worker; a hang is ended by terminate().
 */
export class JobModuleProbe {
  private entry: Promise<{ dir: string; file: string }> | undefined;

  /** Resolves when the module loads and builds in the worker; else throws PoisonJobModuleError. */
  async check(opts: ProbeOptions): Promise<void> {
    const { file } = await this.bundledEntry();
    const worker = new Worker(file, {
      workerData: { modulePath: opts.modulePath, args: [...opts.args], cwd: opts.cwd },
      resourceLimits: { maxOldGenerationSizeMb: PROBE_HEAP_MB },
      stdout: true,
      stderr: true,
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await new Promise<ProbeMessage | { exit: number } | { error: Error } | 'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
        worker.once('message', (m: ProbeMessage) => resolve(m));
        worker.once('error', (error) => resolve({ error }));
        worker.once('exit', (exit) => resolve({ exit }));
      });
      if (outcome === 'timeout') {
        throw new PoisonJobModuleError(
          opts.jobId,
          `did not finish loading within ${opts.timeoutMs} ms (jobmaster.job-module.load-timeout)`,
        );
      }
      if ('exit' in outcome)
        throw new PoisonJobModuleError(opts.jobId, `exited its process (exit code ${outcome.exit}) while loading`);
      if ('error' in outcome)
        throw new PoisonJobModuleError(opts.jobId, `crashed while loading: ${outcome.error.message.split('\n')[0]}`);
      if (!outcome.ok) throw new JobModuleInvalidError(`job ${opts.jobId}: ${outcome.message.split('\n')[0]}`);
    } finally {
      clearTimeout(timer);
      await worker.terminate();
    }
  }

  /**
   * The worker's entry, bundled once per process into plain JavaScript with the same bundler as job
   * modules: a worker thread cannot run our TypeScript sources without a loader of its own.
   */
  private bundledEntry(): Promise<{ dir: string; file: string }> {
    this.entry ??= (async () => {
      // Through the package, not this file: from the CLI's bundle (packages/cli/dist) too.
      const src = dirname(createRequire(import.meta.url).resolve('@rebound/jobmaster'));
      const bundle = await bundleJobModule(join(src, 'job-module-probe-entry.ts'));
      const dir = await mkdtemp(join(tmpdir(), 'rebound-probe-'));
      const file = join(dir, 'job-module-probe.mjs');
      await writeFile(file, bundle.code);
      return { dir, file };
    })();
    this.entry.catch(() => (this.entry = undefined));
    return this.entry;
  }

  async close(): Promise<void> {
    const entry = await this.entry?.catch(() => undefined);
    this.entry = undefined;
    if (entry) await rm(entry.dir, { recursive: true, force: true });
  }
}
