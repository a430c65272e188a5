import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { IllegalStateError, type Configuration, type Logger } from '@rebound/core';
import { WorkerUserCode } from './worker-user-code.js';

/** What starting one job's user code needs. */
export interface UserCodeStart {
  readonly jobId: string;
  readonly modulePath: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  /** The cluster's configuration with the job's on top. */
  readonly jobConfig: Configuration;
  readonly logger: Logger;
}

/**
 * Starts each job's user-code worker (WorkerUserCode) from one entry, built with the CLI by
 * scripts/build.mjs into plain JavaScript with its dependencies inside: a worker thread cannot
 * run our TypeScript sources without a loader of its own, and a JobMaster that bundled it at its
 * first job would pay esbuild's start on that job's path.
 */
export class UserCodeWorkers {
  private entry: string | undefined;

  async start(s: UserCodeStart): Promise<WorkerUserCode> {
    const file = this.bundledEntry();
    const callTimeoutMs = s.jobConfig.getDurationMs('jobmaster.user-code.call-timeout');
    const leaseMs = s.jobConfig.getDurationMs('high-availability.lease.timeout');
    return WorkerUserCode.start({
      jobId: s.jobId,
      modulePath: s.modulePath,
      args: s.args,
      cwd: s.cwd,
      entryFile: file,
      loadTimeoutMs: s.jobConfig.getDurationMs('jobmaster.job-module.load-timeout'),
      callTimeoutMs,
      syncCallTimeoutMs: Math.max(1, Math.min(callTimeoutMs, Math.floor(leaseMs / 3))),
      heapMb: Math.max(16, Math.floor(s.jobConfig.getBytes('jobmaster.user-code.heap-size') / 1024 / 1024)),
      logger: s.logger.child({ component: 'UserCode' }),
    });
  }

  private bundledEntry(): string {
    if (this.entry) return this.entry;
    // Through the package, not this file: from the CLI's bundle (packages/cli/dist) too.
    const file = createRequire(import.meta.url).resolve('@rebound/jobmaster/user-code-worker');
    if (!existsSync(file)) {
      throw new IllegalStateError(`${file} has not been built: run \`npm run build\` (or npm ci) first`);
    }
    this.entry = file;
    return file;
  }
}
