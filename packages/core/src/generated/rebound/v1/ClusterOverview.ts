// Original file: proto/rebound/v1/dispatcher.proto

import type { TaskManagerInfo as _rebound_v1_TaskManagerInfo, TaskManagerInfo__Output as _rebound_v1_TaskManagerInfo__Output } from '../../rebound/v1/TaskManagerInfo.js';
import type { Long } from '@grpc/proto-loader';

export interface ClusterOverview {
  'jobmaster_id'?: (string);
  'epoch'?: (number | string | Long);
  'task_managers'?: (_rebound_v1_TaskManagerInfo)[];
}

export interface ClusterOverview__Output {
  'jobmaster_id': (string);
  'epoch': (number);
  'task_managers': (_rebound_v1_TaskManagerInfo__Output)[];
}
