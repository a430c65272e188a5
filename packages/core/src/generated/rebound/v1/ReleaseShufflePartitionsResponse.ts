// Original file: proto/rebound/v1/shuffle.proto


export interface ReleaseShufflePartitionsResponse {
  'released'?: (number);
}

export interface ReleaseShufflePartitionsResponse__Output {
  'released': (number);
}
