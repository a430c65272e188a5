// Original file: proto/rebound/v1/events.proto


export interface SubpartitionRange {
  'start'?: (number);
  'end'?: (number);
}

export interface SubpartitionRange__Output {
  'start': (number);
  'end': (number);
}
