import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Configuration, Logger } from '@rebound/core';
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

// CommonJS dependencies bundled into an ES module (pino) still call require() for built-ins.
const REQUIRE_BANNER =
  "import { createRequire as __reboundCreateRequire } from 'node:module';\n" +
  'const require = __reboundCreateRequire(import.meta.url);';

/**
 * Starts each job's user-code worker (WorkerUserCode) from one entry, bundled once per process
 * into plain JavaScript: a worker thread cannot run our TypeScript sources without a loader of
 * its own. The bundle holds the SourceCoordinator and the coordinator holder with @rebound/api;
 * of @rebound/core it takes only the error classes (the rest drags in gRPC and protobufjs, which
 * a worker neither needs nor could load from a temporary directory).
 */
export class UserCodeWorkers {
  private entry: Promise<{ dir: string; file: string }> | undefined;

  async start(s: UserCodeStart): Promise<WorkerUserCode> {
    const { file } = await this.bundledEntry();
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

  private bundledEntry(): Promise<{ dir: string; file: string }> {
    this.entry ??= (async () => {
      const req = createRequire(import.meta.url);
      // Through the packages, not this file: from the CLI's bundle (packages/cli/dist) too.
      const src = dirname(req.resolve('@rebound/jobmaster'));
      const coreErrors = join(dirname(req.resolve('@rebound/core')), 'errors.ts');
      const esbuild = await import('esbuild');
      const result = await esbuild.build({
        entryPoints: [join(src, 'user-code', 'user-code-worker-entry.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        write: false,
        logLevel: 'silent',
        legalComments: 'none',
        keepNames: true,
        // @rebound/api loads it only to bundle job modules, which a worker never does.
        external: ['esbuild'],
        banner: { js: REQUIRE_BANNER },
        plugins: [
          {
            name: 'rebound-core-errors',
            setup(build) {
              build.onResolve({ filter: /^@rebound\/core$/ }, () => ({ path: coreErrors }));
            },
          },
        ],
      });
      const dir = await mkdtemp(join(tmpdir(), 'rebound-user-code-'));
      const file = join(dir, 'user-code-worker.mjs');
      await writeFile(file, result.outputFiles[0]!.contents);
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
