// Original file: proto/rebound/v1/jobmaster.proto

export const ExecutionState = {
  EXECUTION_STATE_UNSPECIFIED: 'EXECUTION_STATE_UNSPECIFIED',
  CREATED: 'CREATED',
  SCHEDULED: 'SCHEDULED',
  DEPLOYING: 'DEPLOYING',
  RUNNING: 'RUNNING',
  FINISHED: 'FINISHED',
  CANCELING: 'CANCELING',
  CANCELED: 'CANCELED',
  FAILED: 'FAILED',
} as const;

export type ExecutionState =
  | 'EXECUTION_STATE_UNSPECIFIED'
  | 0
  | 'CREATED'
  | 1
  | 'SCHEDULED'
  | 2
  | 'DEPLOYING'
  | 3
  | 'RUNNING'
  | 4
  | 'FINISHED'
  | 5
  | 'CANCELING'
  | 6
  | 'CANCELED'
  | 7
  | 'FAILED'
  | 8

export type ExecutionState__Output = typeof ExecutionState[keyof typeof ExecutionState]
