import type { Configuration, JobEventType as EventType, Logger } from '@rebound/core';
import { InternalError } from '@rebound/core';
import { applyCommit, type CommitManifest } from './sink-committer.js';

function parse(value: string): { type: string; n: number } | undefined {
  const m = /^([A-Za-z]+):(\d+)$/.exec(value.trim());
  return m ? { type: m[1]!, n: Number(m[2]) } : undefined;
}

/**
 * Test-only crash points (`debug.crash.*`, accepted only with debug.allow-test-options=true): the
 * JobMaster process dies like under SIGKILL — no cleanup, no final flush — at a chosen moment, so
 * tests and the chaos harness can hit exactly the windows around each kind of event. Counts are
 * per process. When no crash point is set, `CrashPoints.from` returns undefined and nothing is
 * checked anywhere.
 */
export class CrashPoints {
  private readonly counts = new Map<string, number>();
  private deploys = 0;

  private constructor(
    private readonly before: { type: string; n: number } | undefined,
    private readonly after: { type: string; n: number } | undefined,
    private readonly afterDeployN: number,
    private readonly inReconciling: boolean,
    private readonly inCommitRenames: number,
    private readonly logger: Logger,
  ) {}

  static from(config: Configuration, logger: Logger): CrashPoints | undefined {
    if (!config.getBoolean('debug.allow-test-options')) return undefined;
    const before = parse(config.getString('debug.crash.before-event'));
    const after = parse(config.getString('debug.crash.after-event'));
    const afterDeploy = config.getInt('debug.crash.after-deploy');
    const reconciling = config.getBoolean('debug.crash.during-reconciling');
    const inCommit = config.getInt('debug.crash.in-commit');
    if (!before && !after && afterDeploy <= 0 && !reconciling && inCommit < 0) return undefined;
    return new CrashPoints(before, after, afterDeploy, reconciling, inCommit, logger);
  }

  private crash(point: string): never {
    this.logger.fatal({ event: 'debug.crash', point }, `crash point reached: ${point}`);
    process.kill(process.pid, 'SIGKILL');
    // SIGKILL to ourselves does not return; this is for the type checker.
    throw new InternalError('unreachable');
  }

  /** Called before an event is handed to the store; crashes before the Nth of its type. */
  beforeEvent(type: EventType): void {
    const n = (this.counts.get(type) ?? 0) + 1;
    this.counts.set(type, n);
    if (this.before?.type === type && this.before.n === n) this.crash(`before ${type}:${n}`);
  }

  /** Called after an event was handed to the store; crashes once the Nth of its type is durable. */
  afterEvent(type: EventType, flush: () => Promise<void>): void {
    const n = this.counts.get(type) ?? 0;
    if (this.after?.type === type && this.after.n === n) {
      void flush().finally(() => this.crash(`after ${type}:${n}`));
    }
  }

  afterDeploy(): void {
    this.deploys++;
    if (this.afterDeployN > 0 && this.deploys === this.afterDeployN) this.crash(`after deploy ${this.deploys}`);
  }

  duringReconciling(): void {
    if (this.inReconciling) this.crash('during RECONCILING');
  }

  /**
   * Called once the commit manifest is durable, before the JobMaster renames anything: dies inside
   * the commit window, after the manifest and `debug.crash.in-commit` renames (0: none). The
   * renames are the real commit's, so the next leader finds exactly what a crash there leaves.
   */
  async inCommit(manifest: CommitManifest): Promise<void> {
    const n = this.inCommitRenames;
    if (n < 0) return;
    if (n === 0) this.crash('in commit, after the manifest, before any rename');
    await applyCommit(manifest, {
      afterRename: (k) => (k === n ? this.crash(`in commit, after ${k} renames`) : undefined),
    });
    // Fewer entries than N: the commit is complete but not acknowledged.
    this.crash(`in commit, after all ${manifest.entries.length} renames`);
  }
}
