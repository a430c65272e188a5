// Original file: proto/rebound/v1/dispatcher.proto


export interface TaskCounts {
  'created'?: (number);
  'scheduled'?: (number);
  'deploying'?: (number);
  'running'?: (number);
  'finished'?: (number);
  'failed'?: (number);
  'canceled'?: (number);
}

export interface TaskCounts__Output {
  'created': (number);
  'scheduled': (number);
  'deploying': (number);
  'running': (number);
  'finished': (number);
  'failed': (number);
  'canceled': (number);
}
