// Original file: proto/rebound/v1/shuffle.proto


export interface PartitionWriteCommit {
  'index_json'?: (string);
}

export interface PartitionWriteCommit__Output {
  'index_json': (string);
}
