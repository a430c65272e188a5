import { DAYS_24, type OptionSpec, type RangesOf } from './option-spec.js';

// High availability: leases, the file or etcd backend, storage, how long finished jobs stay.

/** `http(s)://host:port` URLs separated by commas (empty is allowed: only etcd needs them). */
function checkEtcdEndpoints(value: string): string | undefined {
  for (const url of value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    if (!/^https?:\/\/[^\s/,]+:\d+\/?$/.test(url))
      return `'${url}' is not an etcd client URL like http://127.0.0.1:2379`;
  }
  return undefined;
}

/** A path segment of etcd keys. */
function checkClusterId(value: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value)
    ? undefined
    : `'${value}' is not usable as a key namespace; use letters, digits, '-', '_' or '.'`;
}

export const HA_OPTIONS = {
  'high-availability.lease.timeout': {
    kind: 'duration',
    default: '10 s',
    description: 'A leader lease not renewed for this long may be taken by a standby.',
  },
  'high-availability.lease.renew-interval': {
    kind: 'duration',
    default: '2 s',
    description: 'How often the leader renews its lease.',
  },
  'high-availability.lease.poll-interval': {
    kind: 'duration',
    default: '1 s',
    description: 'How often standbys and TaskManagers look at the HA directory.',
  },
  'high-availability.type': {
    kind: 'enum',
    default: 'file',
    values: ['file', 'etcd'],
    description:
      'HA backend: file (a lease directory in --ha-dir, one host or a shared directory) or etcd (leases and revision-guarded transactions in etcd).',
  },
  'high-availability.etcd.endpoints': {
    kind: 'string',
    default: '',
    description:
      'Comma-separated etcd client URLs (http://host:2379,...); required when high-availability.type is etcd.',
    check: checkEtcdEndpoints,
  },
  'high-availability.etcd.request-timeout': {
    kind: 'duration',
    default: '5 s',
    description: 'Deadline of every etcd call (reads, guarded writes, lease grants and keep-alives).',
  },
  'high-availability.cluster-id': {
    kind: 'string',
    default: 'default',
    description: 'Namespace of this cluster in etcd (keys under /<cluster-id>/), so several clusters share one etcd.',
    check: checkClusterId,
  },
  'high-availability.storageDir': {
    kind: 'string',
    default: '',
    description: 'Shared storage for job artifacts (job modules) and the JobEventStore; empty: the --ha-dir.',
  },
  'jobstore.expiration-time': {
    kind: 'duration',
    default: '1 h',
    description:
      'How long a finished, failed or canceled job (graph, module, status, event log) stays in the HA directory before it is removed.',
  },
  'high-availability.retry.initial-backoff': {
    kind: 'duration',
    default: '100 ms',
    description:
      'A leader whose HA store does not answer (etcd unavailable) retries after this long, doubling up to high-availability.retry.max-backoff, until it answers or the leadership ends.',
  },
  'high-availability.retry.max-backoff': {
    kind: 'duration',
    default: '1 s',
    description: 'Longest wait between two retries of an HA store call that got no answer.',
  },
  'high-availability.etcd.username': {
    kind: 'string',
    default: '',
    description: 'etcd user this process authenticates as (etcd auth); empty: no etcd authentication.',
  },
  'high-availability.etcd.password-file': {
    kind: 'string',
    default: '',
    description: 'File holding the password of high-availability.etcd.username (mode 0600); required with a username.',
  },
  'high-availability.etcd.tls.ca-file': {
    kind: 'string',
    default: '',
    description:
      'PEM CA certificate that the etcd server certificate must be signed by; needed for https:// endpoints of a private CA.',
  },
  'high-availability.etcd.tls.cert-file': {
    kind: 'string',
    default: '',
    description: 'PEM client certificate for etcd (client-cert-auth); with high-availability.etcd.tls.key-file.',
  },
  'high-availability.etcd.tls.key-file': {
    kind: 'string',
    default: '',
    description: 'PEM private key of high-availability.etcd.tls.cert-file.',
  },
} as const satisfies Record<string, OptionSpec>;

export const HA_RANGES: RangesOf<typeof HA_OPTIONS> = {
  'high-availability.lease.timeout': { min: 1, max: DAYS_24 },
  'high-availability.lease.renew-interval': { min: 1, max: DAYS_24 },
  'high-availability.lease.poll-interval': { min: 1, max: DAYS_24 },
  'high-availability.etcd.request-timeout': { min: 1, max: DAYS_24 },
  'jobstore.expiration-time': { min: 0, max: DAYS_24 },
  'high-availability.retry.initial-backoff': { min: 1, max: DAYS_24 },
  'high-availability.retry.max-backoff': { min: 1, max: DAYS_24 },
};
