import { type OptionSpec, type RangesOf } from './option-spec.js';

// Authentication (the cluster secret) and mutual TLS of cluster RPCs.

export const SECURITY_OPTIONS = {
  'security.auth.token-file': {
    kind: 'string',
    default: '',
    description:
      'File holding the cluster secret (mode 0600) that every RPC carries and every server checks; empty: no authentication. `rebound local up` creates one.',
  },
  'security.ssl.internal.enabled': {
    kind: 'boolean',
    default: 'false',
    description:
      'Mutual TLS on every cluster RPC, with the certificates below (scripts/make-certs.sh makes a local CA and them).',
  },
  'security.ssl.internal.cert': {
    kind: 'string',
    default: '',
    description: 'PEM certificate of this process, signed by the cluster CA.',
  },
  'security.ssl.internal.key': {
    kind: 'string',
    default: '',
    description: 'PEM private key of security.ssl.internal.cert.',
  },
  'security.ssl.internal.ca': {
    kind: 'string',
    default: '',
    description: 'PEM certificate of the cluster CA that every peer certificate must be signed by.',
  },
  'security.auth.allow-unauthenticated': {
    kind: 'boolean',
    default: 'false',
    description:
      'Let a JobMaster or TaskManager start without security.auth.token-file (it logs a warning at every start); only on loopback bind addresses.',
  },
  'rpc.health.watch.max-streams': {
    kind: 'int',
    default: '64',
    description:
      'Open grpc.health.v1.Health/Watch streams a daemon serves at once (the health service needs no secret); one more is refused with RESOURCE_EXHAUSTED.',
  },
} as const satisfies Record<string, OptionSpec>;

export const SECURITY_RANGES: RangesOf<typeof SECURITY_OPTIONS> = {
  'rpc.health.watch.max-streams': { min: 1, max: 100_000 },
};
