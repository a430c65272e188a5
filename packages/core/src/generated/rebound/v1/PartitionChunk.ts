// Original file: proto/rebound/v1/partition.proto


export interface PartitionChunk {
  'data'?: (Buffer | Uint8Array | string);
}

export interface PartitionChunk__Output {
  'data': (Buffer);
}
