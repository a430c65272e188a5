// Original file: proto/rebound/v1/events.proto

import type { SealedEventFile as _rebound_v1_SealedEventFile, SealedEventFile__Output as _rebound_v1_SealedEventFile__Output } from '../../rebound/v1/SealedEventFile.js';
import type { Long } from '@grpc/proto-loader';

export interface JobEventFileHeader {
  'job_id'?: (string);
  'epoch'?: (number | string | Long);
  'jobmaster_id'?: (string);
  'created_at_ms'?: (number | string | Long);
  'file_index'?: (number);
  'payload_version'?: (number);
  'seals_earlier_files'?: (boolean);
  'sealed_files'?: (_rebound_v1_SealedEventFile)[];
}

export interface JobEventFileHeader__Output {
  'job_id': (string);
  'epoch': (number);
  'jobmaster_id': (string);
  'created_at_ms': (number);
  'file_index': (number);
  'payload_version': (number);
  'seals_earlier_files': (boolean);
  'sealed_files': (_rebound_v1_SealedEventFile__Output)[];
}
