/** What the replay benchmark (replay.ts) is asked to do and what it measures. */

export interface ReplayBenchOptions {
  readonly executions: number;
  readonly runs: number;
  /** 0: the consumer's parallelism is decided adaptively (producers write max-parallelism subpartitions). */
  readonly consumerParallelism: number;
  readonly taskManagers: number;
  /** Partitions each TaskManager holds that no recovered execution owns (released by reconciliation). */
  readonly stalePerTaskManager: number;
  /** Write a .cpuprofile of each recovery (JobMaster.start(true) only) into this directory. */
  readonly profileDir?: string;
}

export interface RecoveryTiming {
  /** JobMaster.start(true), end to end (store start, replay, apply, reconcile, first schedule). */
  readonly totalMs: number;
  /** CPU time of this process (the JobMaster) during start(true): robust to other load on the machine. */
  readonly cpuMs: number;
  /** From the recovery report: JobEventManager.replay (read, decode, ReplayedJobState.apply). */
  readonly replayMs: number;
  /** applyReplay: graph, finished executions, coordinator restore (report: between replay and reconcile). */
  readonly applyMs: number;
  /** reconcilePartitions: asking the TaskManagers, matching, releasing stale partitions. */
  readonly reconcileMs: number;
  /** The recovery report's started → finished. */
  readonly recoveryMs: number;
  readonly eventsReplayed: number;
  readonly executionsRecovered: number;
  readonly partitionsReused: number;
  readonly partitionsReleased: number;
  readonly partitionsMissing: number;
}

export interface PartTimings {
  /** JobEventManager.replay with a no-op handler: file reads, CRC checks, decoding. */
  readonly readDecodeMs: number;
  /** ReplayedJobState.apply over the decoded records. */
  readonly replayedStateApplyMs: number;
  /** ExecutionGraph.initializeVertex + markFinished for every finished execution + attempts. */
  readonly graphMs: number;
  /** SourceCoordinator.restore with N increments and the newest snapshot (JSON parsing included). */
  readonly coordinatorRestoreMs: number;
  /** FinishedOutputs.of, PartitionReconciliation.add/allNeededReported and the matching for N partitions. */
  readonly reconcileBookkeepingMs: number;
  /** GetAndRetainPartitionsWithMetrics of all TaskManagers, as the JobMaster calls it (parallel). */
  readonly partitionRpcMs: number;
}

export interface Measurement {
  /** First recovery in this process (replay code not yet optimized by the JIT, as in a fresh leader). */
  readonly cold: RecoveryTiming;
  /** Median over the other runs. */
  readonly warm: RecoveryTiming;
  readonly runs: readonly RecoveryTiming[];
}

export interface ReplayBenchResult extends Measurement {
  readonly executions: number;
  readonly events: number;
  readonly logBytes: number;
  readonly logFiles: number;
  readonly snapshots: number;
  readonly subpartitionsPerPartition: number;
  readonly consumerParallelism: number;
  readonly writeMs: number;
  readonly parts: PartTimings;
  /** Targets of the cold (first) run and of the warm median. */
  readonly targetsMs: { readonly cold: number; readonly warm: number };
}
