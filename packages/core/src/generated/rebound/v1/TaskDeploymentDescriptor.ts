// Original file: proto/rebound/v1/taskexecutor.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { SinkDescriptor as _rebound_v1_SinkDescriptor, SinkDescriptor__Output as _rebound_v1_SinkDescriptor__Output } from '../../rebound/v1/SinkDescriptor.js';
import type { InputGateDeploymentDescriptor as _rebound_v1_InputGateDeploymentDescriptor, InputGateDeploymentDescriptor__Output as _rebound_v1_InputGateDeploymentDescriptor__Output } from '../../rebound/v1/InputGateDeploymentDescriptor.js';
import type { ResultPartitionDeploymentDescriptor as _rebound_v1_ResultPartitionDeploymentDescriptor, ResultPartitionDeploymentDescriptor__Output as _rebound_v1_ResultPartitionDeploymentDescriptor__Output } from '../../rebound/v1/ResultPartitionDeploymentDescriptor.js';
import type { Long } from '@grpc/proto-loader';

export interface TaskDeploymentDescriptor {
  'epoch'?: (number | string | Long);
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'vertex_name'?: (string);
  'parallelism'?: (number);
  'operator_ids'?: (string)[];
  'source_operator_id'?: (string);
  'sink'?: (_rebound_v1_SinkDescriptor | null);
  'inputs'?: (_rebound_v1_InputGateDeploymentDescriptor)[];
  'output'?: (_rebound_v1_ResultPartitionDeploymentDescriptor | null);
  'module_digest'?: (string);
  'job_args'?: (string)[];
  'config'?: ({[key: string]: string});
  'sink_temp_file'?: (string);
  'jobmaster_address'?: (string);
  'working_directory'?: (string);
  'session_id'?: (string);
  'partition_read_capability'?: (string);
}

export interface TaskDeploymentDescriptor__Output {
  'epoch': (number);
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'vertex_name': (string);
  'parallelism': (number);
  'operator_ids': (string)[];
  'source_operator_id': (string);
  'sink': (_rebound_v1_SinkDescriptor__Output | null);
  'inputs': (_rebound_v1_InputGateDeploymentDescriptor__Output)[];
  'output': (_rebound_v1_ResultPartitionDeploymentDescriptor__Output | null);
  'module_digest': (string);
  'job_args': (string)[];
  'config': ({[key: string]: string});
  'sink_temp_file': (string);
  'jobmaster_address': (string);
  'working_directory': (string);
  'session_id': (string);
  'partition_read_capability': (string);
}
