// Original file: proto/rebound/v1/jobmaster.proto


export interface JobArtifact {
  'module_bundle'?: (Buffer | Uint8Array | string);
  'digest'?: (string);
}

export interface JobArtifact__Output {
  'module_bundle': (Buffer);
  'digest': (string);
}
