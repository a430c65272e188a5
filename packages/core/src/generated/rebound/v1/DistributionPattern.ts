// Original file: proto/rebound/v1/jobgraph.proto

export const DistributionPattern = {
  DISTRIBUTION_PATTERN_UNSPECIFIED: 'DISTRIBUTION_PATTERN_UNSPECIFIED',
  HASH: 'HASH',
  BROADCAST: 'BROADCAST',
  REBALANCE: 'REBALANCE',
} as const;

export type DistributionPattern =
  | 'DISTRIBUTION_PATTERN_UNSPECIFIED'
  | 0
  | 'HASH'
  | 1
  | 'BROADCAST'
  | 2
  | 'REBALANCE'
  | 3

export type DistributionPattern__Output = typeof DistributionPattern[keyof typeof DistributionPattern]
