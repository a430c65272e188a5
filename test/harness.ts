/**
 * The integration tests' adapter of the cluster driver (@rebound/cli/testing): test timeouts,
 * a fresh work directory per cluster, kept when a test fails.
 */
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { onTestFailed } from 'vitest';
import { ClusterPaths } from '@rebound/cli';
import { ClusterDriver, FAST_FAILOVER_CONFIG, type ClusterUpOptions } from '@rebound/cli/testing';
import { makeTempDir } from './util.js';

export {
  REBOUND_BIN,
  REPO_ROOT,
  TerminalStateError,
  parseTaskEvents,
  runRebound,
  waitFor,
  type CliResult,
  type RunOptions,
  type SubmitOptions,
  type SubmitResult,
  type TaskEvent,
  type WaitOptions,
} from '@rebound/cli/testing';

/** Short timeouts so that failure detection and failover take a second or two, not a minute. */
export const TEST_CONFIG = FAST_FAILOVER_CONFIG;

export interface LocalClusterOptions extends ClusterUpOptions {
  /** On top of TEST_CONFIG. */
  readonly config?: Readonly<Record<string, string>>;
  /** Default: a fresh temp directory. */
  readonly workdir?: string;
}

/**
 * A local cluster of real processes for integration tests, started through the CLI's
 * `rebound local up` in a temporary work directory.
 */
export class LocalCluster extends ClusterDriver {
  private failed = false;
  private removed = false;

  private constructor(
    workdir: string,
    readonly config: Readonly<Record<string, string>>,
    private readonly ownsWorkdir: boolean,
  ) {
    super(workdir);
  }

  static async start(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
    const workdir = opts.workdir ? resolve(opts.workdir) : await makeTempDir('rebound-it-');
    const config = { ...TEST_CONFIG, ...opts.config };
    const cluster = new LocalCluster(workdir, config, opts.workdir === undefined);
    try {
      // Inside a test (not beforeAll): keep the work directory of a failed test for inspection.
      onTestFailed(() => cluster.markFailed());
    } catch {
      // Called from a hook: the caller passes { keepWorkdir } to stop() if it wants to keep it.
    }
    try {
      return await cluster.up({ ...opts, config });
    } catch (err) {
      cluster.markFailed();
      await cluster.stop();
      throw err;
    }
  }

  /** Keeps the work directory at stop() (set automatically when the test that started it fails). */
  markFailed(): void {
    this.failed = true;
  }

  /** `rebound local down`, then removes the work directory unless a test failed (or `keepWorkdir`). */
  override async stop(opts: { keepWorkdir?: boolean } = {}): Promise<void> {
    await super.stop();
    if (this.removed) return;
    this.removed = true;
    const keep = opts.keepWorkdir || this.failed || process.env.REBOUND_KEEP_WORKDIR === '1';
    if (keep || !this.ownsWorkdir) {
      if (keep) process.stderr.write(`rebound test: keeping work directory ${this.workdir}\n`);
      return;
    }
    await rm(this.workdir, { recursive: true, force: true });
  }

  /** Names of the files in the logs directory (for diagnostics). */
  logFiles(): string[] {
    try {
      return readdirSync(ClusterPaths.logsDir(this.workdir));
    } catch {
      return [];
    }
  }
}

interface TaskLike {
  readonly result?: { readonly state?: string };
  readonly tasks?: readonly TaskLike[];
}

/**
 * Whether any test of a suite failed: `afterAll((_, suite) => cluster.stop({ keepWorkdir: suiteFailed(suite) }))`
 * keeps the work directory of a cluster started in beforeAll when one of its tests failed.
 */
export function suiteFailed(suite: TaskLike): boolean {
  return suite.result?.state === 'fail' || (suite.tasks ?? []).some((t) => suiteFailed(t));
}
