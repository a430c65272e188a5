/** What a throughput run measured: the JSON it writes, and what the Markdown report reads. */
import type { ClusterRun } from './cluster.js';

export interface BaselineRun {
  /** Process wall time, start-up included (as the cluster's submit time includes the CLI's). */
  readonly wallSeconds: number;
  /** Reading, counting and writing, measured inside the process. */
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly peakRssMb: number;
  readonly bytes: number;
  readonly lines: number;
  readonly words: number;
  readonly distinct: number;
}

export interface RoundResult {
  readonly round: number;
  readonly order: 'baseline-first' | 'cluster-first';
  readonly baseline: BaselineRun;
  readonly cluster: ClusterRun;
  /** Baseline process wall / cluster submit wall: > 1 means the cluster is faster. */
  readonly ratio: number;
  readonly outputsIdentical: boolean;
  readonly verification: string;
}

export interface CorpusResult {
  readonly name: string;
  readonly input: {
    mb: number;
    bytes: number;
    files: number;
    lines: number;
    words: number;
    distinctWords: number;
    vocabulary: number;
    zipfExponent: number;
    seed: number;
  };
  readonly rounds: RoundResult[];
  readonly medianRatio: number;
  readonly baselineCpuSecondsPerMb: number;
  readonly clusterCpuSecondsPerMb: number | null;
  /** Cluster CPU per MB / baseline CPU per MB (target <= 1.5). */
  readonly cpuFactor: number | null;
  readonly peakRssMb: Record<string, number | null>;
  readonly outputsIdentical: boolean;
}
