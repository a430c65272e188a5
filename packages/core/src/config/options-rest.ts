import { PORT, DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// REST API, dashboard and metrics endpoints.

export const REST_OPTIONS = {
  'rest.port': {
    kind: 'int',
    default: '8081',
    description: 'Port of the REST API, dashboard and /metrics of a JobMaster (0: any free port).',
  },
  'rest.bind-address': {
    kind: 'string',
    default: '127.0.0.1',
    description: 'Address the REST API binds to (and advertises unless it is a wildcard address).',
  },
  'rest.address': {
    kind: 'string',
    default: '',
    description:
      'Host the REST URL is advertised with, as clients reach it (e.g. 127.0.0.1 for a port published by Docker); empty: the bind address, or the host name for a wildcard.',
  },
  'rest.session.timeout': {
    kind: 'duration',
    default: '12 h',
    description:
      'Lifetime of a dashboard session: the cookie a browser gets for the ?token= link (it never holds the cluster secret itself).',
  },
  'rest.stream.min-interval': {
    kind: 'duration',
    default: '500 ms',
    description:
      'Shortest time between two updates the live stream (/v1/stream) sends one client; changes in between are coalesced.',
  },
  'metrics.port': {
    kind: 'int',
    default: '9249',
    description: 'Port of the Prometheus /metrics endpoint of a TaskManager (0: any free port).',
  },
  'rest.proxy.timeout': {
    kind: 'duration',
    default: '5 s',
    description:
      "Longest a standby JobMaster waits for the leader's answer to a REST read it proxies (for the live stream: for its first byte); then 503 naming the reason.",
  },
} as const satisfies Record<string, OptionSpec>;

export const REST_RANGES: RangesOf<typeof REST_OPTIONS> = {
  'rest.port': PORT,
  'rest.session.timeout': { min: 1000, max: DAYS_24 },
  'rest.stream.min-interval': { min: 1, max: DAYS_24 },
  'metrics.port': PORT,
  'rest.proxy.timeout': { min: 1, max: DAYS_24 },
};
