// Original file: proto/rebound/v1/events.proto


export interface OperatorCoordinatorSnapshot {
  'operator_id'?: (string);
  'state'?: (Buffer | Uint8Array | string);
}

export interface OperatorCoordinatorSnapshot__Output {
  'operator_id': (string);
  'state': (Buffer);
}
