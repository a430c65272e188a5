import { resolve } from 'node:path';
import { ClusterDriver, runReboundInProcess, type ClusterUpOptions } from '@rebound/cli/testing';
import type { LeaderInfo } from '@rebound/ha';
import { START_TIMEOUT_MS } from './config.js';

export { REPO_ROOT, killLiveClusters, runReboundInProcess as rebound, type CliResult } from '@rebound/cli/testing';

/**
 * A local cluster of one run, through the cluster driver: the CLI runs inside this process (no
 * CLI start-up per fault, which matters when a run restarts processes several times), and every
 * question to the leader is one attempt (the harness polls through the faults it causes).
 */
export class ChaosCluster extends ClusterDriver {
  constructor(workdir: string) {
    super(resolve(workdir), { cli: runReboundInProcess, failoverTimeoutMs: 0, downTimeoutMs: 5_000 });
  }

  static up(workdir: string, opts: ClusterUpOptions): Promise<ChaosCluster> {
    return new ChaosCluster(workdir).up({ startTimeoutMs: START_TIMEOUT_MS, ...opts });
  }

  /** undefined also while the HA backend cannot be read. */
  override async leader(): Promise<LeaderInfo | undefined> {
    return super.leader().catch(() => undefined);
  }
}

/** SIGKILLs every process of the cluster in `workdir`, synchronously (exit hooks, failed starts). */
export function killAllSync(workdir: string): void {
  new ChaosCluster(workdir).killAllSync();
}
