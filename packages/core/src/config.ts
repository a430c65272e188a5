import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.js';

type Kind = 'duration' | 'memory' | 'int' | 'boolean' | 'string' | 'enum';

interface OptionSpec<K extends Kind = Kind> {
  readonly kind: K;
  readonly default: string;
  readonly description: string;
  readonly values?: readonly string[];
  /** Test-only options: accepted only when debug.allow-test-options is true. */
  readonly testOnly?: boolean;
  /** Further validation of a string value: the problem, or undefined when it is fine. */
  readonly check?: (value: string) => string | undefined;
  /** Inclusive bounds of an int value. */
}

const JOB_EVENT_TYPE_NAMES = ['ExecutionJobVertexInitialized', 'ExecutionVertexFinished', 'ExecutionVertexReset'];

/** `<EventType>:<N>` with N >= 1: the Nth event of that type this JobMaster process writes. */
function checkEventCrashPoint(value: string): string | undefined {
  const m = /^([A-Za-z]+):(\d+)$/.exec(value.trim());
  if (!m) return `'${value}' is not <EventType>:<N>, e.g. ExecutionVertexFinished:3`;
  if (!JOB_EVENT_TYPE_NAMES.includes(m[1]!)) {
    return `unknown event type '${m[1]}'; it can never trigger: use one of ${JOB_EVENT_TYPE_NAMES.join(', ')}`;
  }
  if (Number(m[2]) < 1) return `N must be at least 1 in '${value}'`;
  return undefined;
}

/** `http(s)://host:port` URLs separated by commas (empty is allowed: only etcd needs them). */
function checkEtcdEndpoints(value: string): string | undefined {
  for (const url of value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    if (!/^https?:\/\/[^\s/,]+:\d+\/?$/.test(url)) return `'${url}' is not an etcd client URL like http://127.0.0.1:2379`;
  }
  return undefined;
}

/** A path segment of etcd keys. */
function checkClusterId(value: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value) ? undefined : `'${value}' is not usable as a key namespace; use letters, digits, '-', '_' or '.'`;
}

/**
 * Every configuration key the cluster knows, with Flink's names and defaults where Flink has the
 * same option. Anything else is rejected with the key named.
 */
export const OPTIONS = {
  'execution.batch.job-recovery.enabled': { kind: 'boolean', default: 'false', description: 'Recover batch job progress after a JobMaster failover (FLIP-383).' },
  'execution.batch.job-recovery.previous-worker.recovery.timeout': { kind: 'duration', default: '30 s', description: 'How long a new leader waits for TaskManagers to report retained partitions.' },
  'execution.batch.job-recovery.snapshot.min-pause': { kind: 'duration', default: '3 min', description: 'Minimum pause between coordinator snapshots written with finished events.' },
  'job-event.store.write-buffer.size': { kind: 'memory', default: '1 mb', description: 'Bytes buffered by the JobEventStore before a flush.' },
  'job-event.store.write-buffer.flush-interval': { kind: 'duration', default: '1 s', description: 'Longest time an event waits in the JobEventStore buffer.' },
  'job-event.store.durability': { kind: 'enum', default: 'fsync', values: ['fsync', 'flush'], description: 'fsync: every flush is fsynced; flush: written to the OS only.' },
  'taskmanager.registration.timeout': { kind: 'duration', default: '5 min', description: 'How long a TaskManager that lost its JobMaster keeps retained partitions while it retries registering.' },
  'taskmanager.numberOfTaskSlots': { kind: 'int', default: '2', description: 'Slots per TaskManager.' },
  'execution.batch.adaptive.auto-parallelism.min-parallelism': { kind: 'int', default: '1', description: 'Lower bound of a decided parallelism.' },
  'execution.batch.adaptive.auto-parallelism.max-parallelism': { kind: 'int', default: '128', description: 'Upper bound of a decided parallelism, and the number of subpartitions written for adaptive consumers.' },
  'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': { kind: 'memory', default: '16 mb', description: 'Bytes one task of an adaptive vertex should consume.' },
  'execution.batch.adaptive.auto-parallelism.default-source-parallelism': { kind: 'int', default: '0', description: 'Parallelism of sources that do not set one (0: one subtask per split, at most max-parallelism; one per slot registered when the job starts where there are 4 or more splits per slot).' },
  'parallelism.default': { kind: 'int', default: '0', description: 'Parallelism of non-source vertices that do not set one (0: decided adaptively).' },
  'heartbeat.interval': { kind: 'duration', default: '10 s', description: 'Interval of TaskManager heartbeats to the JobMaster.' },
  'heartbeat.timeout': { kind: 'duration', default: '50 s', description: 'A peer not heard from for this long is considered lost.' },
  'high-availability.lease.timeout': { kind: 'duration', default: '10 s', description: 'A leader lease not renewed for this long may be taken by a standby.' },
  'high-availability.lease.renew-interval': { kind: 'duration', default: '2 s', description: 'How often the leader renews its lease.' },
  'high-availability.lease.poll-interval': { kind: 'duration', default: '1 s', description: 'How often standbys and TaskManagers look at the HA directory.' },
  'high-availability.type': { kind: 'enum', default: 'file', values: ['file', 'etcd'], description: 'HA backend: file (a lease directory in --ha-dir, one host or a shared directory) or etcd (leases and revision-guarded transactions in etcd).' },
  'high-availability.etcd.endpoints': { kind: 'string', default: '', description: 'Comma-separated etcd client URLs (http://host:2379,...); required when high-availability.type is etcd.', check: checkEtcdEndpoints },
  'high-availability.etcd.request-timeout': { kind: 'duration', default: '5 s', description: 'Deadline of every etcd call (reads, guarded writes, lease grants and keep-alives).' },
  'high-availability.cluster-id': { kind: 'string', default: 'default', description: 'Namespace of this cluster in etcd (keys under /<cluster-id>/), so several clusters share one etcd.', check: checkClusterId },
  'high-availability.storageDir': { kind: 'string', default: '', description: 'Shared storage for job artifacts (job modules) and the JobEventStore; empty: the --ha-dir.' },
  'restart-strategy.fixed-delay.attempts': { kind: 'int', default: '20', description: 'Failovers a job may take before it fails.' },
  'web.exception-history-size': { kind: 'int', default: '16', description: 'Task failures a job keeps for /jobs/:id/exceptions, newest first (Flink\'s key and default).' },
  'restart-strategy.fixed-delay.delay': { kind: 'duration', default: '1 s', description: 'Delay before a failed task is redeployed.' },
  'cluster.startup.timeout': { kind: 'duration', default: '1 min', description: 'Longest start-up of a JobMaster or TaskManager process; one that takes longer exits with an error.' },
  'jobmaster.job-module.load-timeout': { kind: 'duration', default: '30 s', description: 'Longest time a job module may take to load and build in the isolated worker a JobMaster tries it in first; one that takes longer fails its job.' },
  'jobmaster.job-load.max-crashes': { kind: 'int', default: '2', description: 'JobMasters that may die in a row while loading one job module before the job is failed instead of loaded again.' },
  'jobstore.expiration-time': { kind: 'duration', default: '1 h', description: 'How long a finished, failed or canceled job (graph, module, status, event log) stays in the HA directory before it is removed.' },
  'rpc.timeout': { kind: 'duration', default: '10 s', description: 'Deadline of cluster-internal RPCs.' },
  'rpc.partition-request.timeout': { kind: 'duration', default: '30 s', description: 'Longest wait for the first chunk of a requested subpartition.' },
  'security.auth.token-file': { kind: 'string', default: '', description: 'File holding the cluster secret (mode 0600) that every RPC carries and every server checks; empty: no authentication. `rebound local up` creates one.' },
  'security.ssl.internal.enabled': { kind: 'boolean', default: 'false', description: 'Mutual TLS on every cluster RPC, with the certificates below (scripts/make-certs.sh makes a local CA and them).' },
  'security.ssl.internal.cert': { kind: 'string', default: '', description: 'PEM certificate of this process, signed by the cluster CA.' },
  'security.ssl.internal.key': { kind: 'string', default: '', description: 'PEM private key of security.ssl.internal.cert.' },
  'security.ssl.internal.ca': { kind: 'string', default: '', description: 'PEM certificate of the cluster CA that every peer certificate must be signed by.' },
  'jobmaster.bind-host': { kind: 'string', default: '127.0.0.1', description: 'Host the JobMaster binds, and advertises unless jobmaster.rpc.address is set.' },
  'jobmaster.port': { kind: 'int', default: '0', description: 'Port of the JobMaster (0: any free port).' },
  'jobmaster.rpc.address': { kind: 'string', default: '', description: "Host the JobMaster advertises to TaskManagers and clients (Flink's jobmanager.rpc.address); empty: jobmaster.bind-host. Set it when binding a wildcard address." },
  'taskmanager.bind-host': { kind: 'string', default: '127.0.0.1', description: 'Host the TaskManager binds, and advertises unless taskmanager.host is set.' },
  'taskmanager.port': { kind: 'int', default: '0', description: 'Port of the TaskManager (0: any free port).' },
  'taskmanager.host': { kind: 'string', default: '', description: "Host the TaskManager advertises to the JobMaster and to other TaskManagers (Flink's taskmanager.host); empty: taskmanager.bind-host. Set it when binding a wildcard address." },
  'taskmanager.network.block-size': { kind: 'memory', default: '32 kb', description: 'Size of the blocks a partition is written and streamed in.' },
  'taskmanager.network.combiner.max-keys': { kind: 'int', default: '500000', description: 'Keys a producer-side combiner holds before it spills to the partition (500,000 keys of a wordcount take about 60 MB).' },
  'rest.port': { kind: 'int', default: '8081', description: 'Port of the REST API, dashboard and /metrics of a JobMaster (0: any free port).' },
  'rest.bind-address': { kind: 'string', default: '127.0.0.1', description: 'Address the REST API binds to (and advertises unless it is a wildcard address).' },
  'rest.address': { kind: 'string', default: '', description: 'Host the REST URL is advertised with, as clients reach it (e.g. 127.0.0.1 for a port published by Docker); empty: the bind address, or the host name for a wildcard.' },
  'rest.stream.min-interval': { kind: 'duration', default: '500 ms', description: 'Shortest time between two updates the live stream (/v1/stream) sends one client; changes in between are coalesced.' },
  'metrics.port': { kind: 'int', default: '9249', description: 'Port of the Prometheus /metrics endpoint of a TaskManager (0: any free port).' },
  'debug.allow-test-options': { kind: 'boolean', default: 'false', description: 'Allow the debug.* crash points used by tests and the chaos harness.' },
  'debug.crash.before-event': { kind: 'string', default: '', testOnly: true, check: checkEventCrashPoint, description: 'Test only: the JobMaster exits abruptly (like SIGKILL) just before it writes the Nth event of a type: <EventType>:<N>.' },
  'debug.crash.after-event': { kind: 'string', default: '', testOnly: true, check: checkEventCrashPoint, description: 'Test only: the JobMaster exits abruptly just after the Nth event of a type is durable: <EventType>:<N>.' },
  'debug.crash.after-deploy': { kind: 'int', default: '0', testOnly: true, description: 'Test only: the JobMaster exits abruptly just after it deploys its Nth task (0: never).' },
  'debug.crash.in-commit': { kind: 'int', default: '-1', testOnly: true, description: 'Test only: the JobMaster exits abruptly inside the sink commit, once the commit manifest is saved and N sink files are renamed (-1: never).' },
  'debug.crash.during-reconciling': { kind: 'boolean', default: 'false', testOnly: true, description: 'Test only: the JobMaster exits abruptly in RECONCILING, after replay and before reconciliation.' },
} as const satisfies Record<string, OptionSpec>;

export type ConfigKey = keyof typeof OPTIONS;

type NumericKey = { [K in ConfigKey]: (typeof OPTIONS)[K]['kind'] extends 'duration' | 'memory' | 'int' ? K : never }[ConfigKey];

/**
 * Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer delay fires after 1 ms. Every
 * duration that drives a timer is bounded below that, so no configured timer can wrap around.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const DAYS_24 = 24 * 86_400_000;
const PORT = { min: 0, max: 65_535 } as const;

/**
 * The accepted range of every numeric key, in the key's own unit (ms, bytes or a count). A value
 * outside it is refused with the key and the range named: 0 where 0 would disable a safety
 * (heartbeats, deadlines) is out of range, not "off".
 */
export const RANGES: Readonly<Record<NumericKey, { readonly min: number; readonly max: number }>> = {
  'execution.batch.job-recovery.previous-worker.recovery.timeout': { min: 0, max: DAYS_24 },
  'execution.batch.job-recovery.snapshot.min-pause': { min: 0, max: DAYS_24 },
  'job-event.store.write-buffer.size': { min: 1, max: 1024 ** 3 },
  'job-event.store.write-buffer.flush-interval': { min: 1, max: DAYS_24 },
  'taskmanager.registration.timeout': { min: 1, max: DAYS_24 },
  'taskmanager.numberOfTaskSlots': { min: 1, max: 1024 },
  'execution.batch.adaptive.auto-parallelism.min-parallelism': { min: 1, max: 32_768 },
  'execution.batch.adaptive.auto-parallelism.max-parallelism': { min: 1, max: 32_768 },
  'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': { min: 1, max: 1024 ** 4 },
  'execution.batch.adaptive.auto-parallelism.default-source-parallelism': { min: 0, max: 32_768 },
  'parallelism.default': { min: 0, max: 32_768 },
  'heartbeat.interval': { min: 1, max: DAYS_24 },
  'heartbeat.timeout': { min: 1, max: DAYS_24 },
  'high-availability.lease.timeout': { min: 1, max: DAYS_24 },
  'high-availability.lease.renew-interval': { min: 1, max: DAYS_24 },
  'high-availability.lease.poll-interval': { min: 1, max: DAYS_24 },
  'high-availability.etcd.request-timeout': { min: 1, max: DAYS_24 },
  'restart-strategy.fixed-delay.attempts': { min: 0, max: 1_000_000 },
  'restart-strategy.fixed-delay.delay': { min: 0, max: DAYS_24 },
  'web.exception-history-size': { min: 0, max: 100_000 },
  'cluster.startup.timeout': { min: 1, max: DAYS_24 },
  'jobstore.expiration-time': { min: 0, max: DAYS_24 },
  'jobmaster.job-module.load-timeout': { min: 1, max: DAYS_24 },
  'jobmaster.job-load.max-crashes': { min: 1, max: 1000 },
  'rpc.timeout': { min: 1, max: DAYS_24 },
  'rpc.partition-request.timeout': { min: 1, max: DAYS_24 },
  'jobmaster.port': PORT,
  'rest.port': PORT,
  'metrics.port': PORT,
  'rest.stream.min-interval': { min: 1, max: DAYS_24 },
  'taskmanager.port': PORT,
  'taskmanager.network.block-size': { min: 64, max: 64 * 1024 ** 2 },
  'taskmanager.network.combiner.max-keys': { min: 0, max: 100_000_000 },
  'debug.crash.after-deploy': { min: 0, max: 1_000_000 },
  'debug.crash.in-commit': { min: -1, max: 1_000_000 },
};

/** "30 s", "1 mb", "5": a number in the key's unit as a person reads it (for range errors). */
function formatInUnit(kind: Kind, n: number): string {
  if (kind === 'duration') {
    for (const [unit, f] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
      if (n >= f && n % f === 0) return `${n / f} ${unit}`;
    }
    return `${n} ms`;
  }
  if (kind === 'memory') {
    for (const [unit, f] of [['tb', 1024 ** 4], ['gb', 1024 ** 3], ['mb', 1024 ** 2], ['kb', 1024]] as const) {
      if (n >= f && n % f === 0) return `${n / f} ${unit}`;
    }
    return `${n} b`;
  }
  return String(n);
}

function checkRange(key: string, kind: Kind, value: string, n: number): void {
  const range = (RANGES as Record<string, { min: number; max: number } | undefined>)[key];
  if (!range || (n >= range.min && n <= range.max)) return;
  throw new ConfigError(`${key}: '${value}' is out of range; use a value from ${formatInUnit(kind, range.min)} to ${formatInUnit(kind, range.max)}`);
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

const MEMORY_UNITS: Record<string, number> = {
  b: 1, bytes: 1,
  k: 1024, kb: 1024, kib: 1024, kibibytes: 1024,
  m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, mebibytes: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3, gibibytes: 1024 ** 3,
};

/** Parses Flink-style durations: "30 s", "3 min", "500ms", "1h"; a bare number is milliseconds. */
export function parseDuration(text: string, key = 'duration'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m?.[2]?.toLowerCase() ?? '';
  const factor = unit === '' ? 1 : DURATION_UNITS[unit];
  if (!m || factor === undefined) {
    throw new ConfigError(`${key}: '${text}' is not a duration; use e.g. '500 ms', '30 s' or '5 min'`);
  }
  return Math.round(Number(m[1]) * factor);
}

/** Parses Flink-style memory sizes: "1 mb", "16mb", "256 kb"; a bare number is bytes. */
export function parseMemorySize(text: string, key = 'size'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m?.[2]?.toLowerCase() ?? '';
  const factor = unit === '' ? 1 : MEMORY_UNITS[unit];
  if (!m || factor === undefined) {
    throw new ConfigError(`${key}: '${text}' is not a memory size; use e.g. '1 mb', '256 kb' or '1048576'`);
  }
  return Math.round(Number(m[1]) * factor);
}

function validate(key: string, value: string, allowTestOptions: boolean): void {
  const spec = (OPTIONS as Record<string, OptionSpec>)[key];
  if (!spec) {
    throw new ConfigError(`unknown configuration key '${key}'; see 'rebound config' for the known keys`);
  }
  if (spec.testOnly && !allowTestOptions) {
    throw new ConfigError(`'${key}' is a test-only option; set debug.allow-test-options=true to use it`);
  }
  switch (spec.kind) {
    case 'duration':
      checkRange(key, spec.kind, value, parseDuration(value, key));
      return;
    case 'memory':
      checkRange(key, spec.kind, value, parseMemorySize(value, key));
      return;
    case 'int': {
      if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${key}: '${value}' is not an integer`);
      checkRange(key, spec.kind, value, Number.parseInt(value, 10));
      return;
    }
    case 'boolean':
      if (!/^(true|false)$/i.test(value.trim())) throw new ConfigError(`${key}: '${value}' is not true or false`);
      return;
    case 'enum':
      if (!spec.values?.includes(value.trim())) {
        throw new ConfigError(`${key}: '${value}' is not one of ${spec.values?.join(', ')}`);
      }
      return;
    case 'string': {
      const problem = value.trim() === '' ? undefined : spec.check?.(value);
      if (problem) throw new ConfigError(`${key}: ${problem}`);
      return;
    }
  }
}

/**
 * An immutable, validated set of configuration values. Built from defaults, an optional YAML
 * file (flat Flink-style keys) and `-D key=value` overrides, in that order.
 */
export class Configuration {
  private readonly values: ReadonlyMap<string, string>;

  private constructor(values: Map<string, string>) {
    this.values = values;
  }

  static of(overrides: Record<string, string> = {}): Configuration {
    return Configuration.empty().with(overrides);
  }

  static empty(): Configuration {
    return new Configuration(new Map());
  }

  /** Loads a YAML file of `key: value` pairs (nested maps are joined with dots, as Flink does). */
  static fromYamlFile(path: string): Configuration {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (err) {
      throw new ConfigError(`config file ${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    const flat: Record<string, string> = {};
    const walk = (prefix: string, node: unknown): void => {
      if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
        for (const [k, v] of Object.entries(node)) walk(prefix ? `${prefix}.${k}` : k, v);
      } else if (prefix) {
        flat[prefix] = String(node);
      }
    };
    walk('', doc ?? {});
    return Configuration.of(flat);
  }

  /** Parses `key=value` strings given with -D. */
  static parseDynamicProperties(props: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const p of props) {
      const i = p.indexOf('=');
      if (i <= 0) throw new ConfigError(`-D ${p}: expected key=value`);
      out[p.slice(0, i).trim()] = p.slice(i + 1).trim();
    }
    return out;
  }

  with(overrides: Record<string, string>): Configuration {
    const next = new Map(this.values);
    for (const [k, v] of Object.entries(overrides)) next.set(k, String(v));
    const allowTest = /^true$/i.test(next.get('debug.allow-test-options') ?? 'false');
    for (const [k, v] of Object.entries(overrides)) validate(k, String(v), allowTest);
    return new Configuration(next);
  }

  private raw(key: ConfigKey): string {
    return this.values.get(key) ?? OPTIONS[key].default;
  }

  getString(key: ConfigKey): string {
    return this.raw(key);
  }
  getDurationMs(key: ConfigKey): number {
    return parseDuration(this.raw(key), key);
  }
  getBytes(key: ConfigKey): number {
    return parseMemorySize(this.raw(key), key);
  }
  getInt(key: ConfigKey): number {
    return Number.parseInt(this.raw(key), 10);
  }
  getBoolean(key: ConfigKey): boolean {
    return /^true$/i.test(this.raw(key));
  }

  /** Only the explicitly set values (what travels with a job or to a child process). */
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.values);
  }

  /** `-D key=value` arguments that reproduce this configuration in a child process. */
  toDynamicArgs(): string[] {
    return [...this.values].flatMap(([k, v]) => ['-D', `${k}=${v}`]);
  }
}
