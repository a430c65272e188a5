/**
 * The recovery benchmark's adapter of the cluster driver (@rebound/cli/testing). The leader is
 * SIGKILLed from this process, not through `rebound local kill-leader`, so the kill time is known
 * to the millisecond instead of "somewhere during a CLI start-up".
 */
import { ClusterDriver, killLiveClusters, type ClusterUpOptions } from '@rebound/cli/testing';

export { FAST_FAILOVER_CONFIG, REPO_ROOT as ROOT, runRebound, type TaskEvent } from '@rebound/cli/testing';

export interface KilledLeader {
  readonly id: string;
  readonly pid: number;
  readonly epoch: number;
  readonly address: string;
  readonly signal: 'SIGKILL';
  /** Date.now() just before the signal. */
  readonly killedAtMs: number;
}

export class BenchCluster extends ClusterDriver {
  static start(workdir: string, opts: ClusterUpOptions): Promise<BenchCluster> {
    // One attempt per status poll: the benchmark times the failover itself.
    return new BenchCluster(workdir, { failoverTimeoutMs: 0 }).up(opts);
  }

  /** SIGKILLs the JobMaster the HA backend names as leader and waits until it is gone. */
  override async killLeader(): Promise<KilledLeader> {
    const leader = await this.leader();
    if (!leader) throw new Error('no leader to kill');
    const proc = await this.process(leader.jobmasterId);
    const killedAtMs = Date.now();
    if (!(await this.signalProcess(proc, 'SIGKILL', { intervalMs: 5 })))
      throw new Error(`leader ${leader.jobmasterId} is not a running process of the cluster`);
    return { id: proc.id, pid: proc.pid, epoch: leader.epoch, address: leader.address, signal: 'SIGKILL', killedAtMs };
  }
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killLiveClusters();
    process.exit(130);
  });
}
