import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  Configuration,
  MAX_TIMER_MS,
  OPTIONS,
  RANGES,
  parseDuration,
  parseMemorySize,
  type ConfigKey,
} from './config.js';
import { OPTION_AREAS } from './config/options.js';
import { ConfigError } from './errors.js';

describe('parseDuration', () => {
  it.each([
    ['30 s', 30_000],
    ['3 min', 180_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['250', 250],
    ['1.5 s', 1_500],
    [' 2 seconds ', 2_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '10 parsecs', '-1 s', '1e3 ms'])('rejects %j with the key named', (text) => {
    expect(() => parseDuration(text, 'heartbeat.timeout')).toThrow(ConfigError);
    expect(() => parseDuration(text, 'heartbeat.timeout')).toThrow(/heartbeat\.timeout: .* is not a duration/);
  });
});

describe('parseMemorySize', () => {
  it.each([
    ['1 mb', 1024 ** 2],
    ['16mb', 16 * 1024 ** 2],
    ['256 kb', 256 * 1024],
    ['1048576', 1024 ** 2],
    ['2g', 2 * 1024 ** 3],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseMemorySize(text)).toBe(bytes);
  });

  it('rejects units it does not know', () => {
    expect(() => parseMemorySize('1 mile', 'job-event.store.write-buffer.size')).toThrow(
      /write-buffer\.size: '1 mile' is not a memory size/,
    );
  });
});

describe('Configuration', () => {
  it('has Flink defaults', () => {
    const c = Configuration.empty();
    expect(c.getBoolean('execution.batch.job-recovery.enabled')).toBe(false);
    expect(c.getDurationMs('execution.batch.job-recovery.previous-worker.recovery.timeout')).toBe(30_000);
    expect(c.getDurationMs('execution.batch.job-recovery.snapshot.min-pause')).toBe(180_000);
    expect(c.getBytes('job-event.store.write-buffer.size')).toBe(1024 ** 2);
    expect(c.getDurationMs('job-event.store.write-buffer.flush-interval')).toBe(1_000);
    expect(c.getDurationMs('taskmanager.registration.timeout')).toBe(300_000);
    expect(c.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism')).toBe(128);
    expect(c.getBytes('execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task')).toBe(16 * 1024 ** 2);
    expect(c.getDurationMs('heartbeat.interval')).toBe(10_000);
    expect(c.getDurationMs('heartbeat.timeout')).toBe(50_000);
  });

  it('applies overrides in order and keeps only explicit values for children', () => {
    const c = Configuration.of({ 'heartbeat.interval': '1 s' }).with({ 'heartbeat.interval': '200 ms' });
    expect(c.getDurationMs('heartbeat.interval')).toBe(200);
    expect(c.toRecord()).toEqual({ 'heartbeat.interval': '200 ms' });
    expect(c.toDynamicArgs()).toEqual(['-D', 'heartbeat.interval=200 ms']);
  });

  it('rejects unknown keys and bad values, naming the key', () => {
    expect(() => Configuration.of({ 'heartbeat.intervall': '1 s' })).toThrow(
      /unknown configuration key 'heartbeat.intervall'/,
    );
    expect(() => Configuration.of({ 'execution.batch.job-recovery.enabled': 'yes' })).toThrow(
      /enabled: 'yes' is not true or false/,
    );
    expect(() => Configuration.of({ 'taskmanager.numberOfTaskSlots': 'two' })).toThrow(
      /numberOfTaskSlots: 'two' is not an integer/,
    );
    expect(() => Configuration.of({ 'job-event.store.durability': 'sometimes' })).toThrow(/is not one of fsync, flush/);
  });

  it('parses -D key=value', () => {
    expect(Configuration.parseDynamicProperties(['a.b=1', 'c = x=y'])).toEqual({ 'a.b': '1', c: 'x=y' });
    expect(() => Configuration.parseDynamicProperties(['novalue'])).toThrow(/-D novalue: expected key=value/);
  });

  it('reads flat and nested YAML files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-config-'));
    const file = join(dir, 'conf.yaml');
    writeFileSync(file, 'heartbeat:\n  interval: 2 s\nexecution.batch.job-recovery.enabled: true\n');
    const c = Configuration.fromYamlFile(file);
    expect(c.getDurationMs('heartbeat.interval')).toBe(2_000);
    expect(c.getBoolean('execution.batch.job-recovery.enabled')).toBe(true);
    writeFileSync(file, 'heartbeat: [unclosed\n');
    expect(() => Configuration.fromYamlFile(file)).toThrow(/is not valid YAML/);
    expect(() => Configuration.fromYamlFile(join(dir, 'missing.yaml'))).toThrow(
      /cannot read config file .*missing\.yaml: ENOENT/,
    );
  });

  it('every default parses', () => {
    const defaults = Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.default]));
    const set: Record<string, string> = { ...defaults, 'debug.allow-test-options': 'true' };
    const c = Configuration.of(set);
    expect(c.toRecord()).toEqual(set);
    // Each default also reads back through the getter of its kind, as a value of that kind.
    for (const [key, o] of Object.entries(OPTIONS) as Array<[ConfigKey, (typeof OPTIONS)[ConfigKey]]>) {
      const spec = o as { kind: string; default: string; values?: readonly string[] };
      if (spec.kind === 'duration')
        expect(c.getDurationMs(key), key).toSatisfy((v: number) => Number.isFinite(v) && v >= 0);
      else if (spec.kind === 'memory')
        expect(c.getBytes(key), key).toSatisfy((v: number) => Number.isSafeInteger(v) && v >= 0);
      else if (spec.kind === 'int') expect(c.getInt(key), key).toSatisfy(Number.isSafeInteger);
      else if (spec.kind === 'boolean') expect(c.getBoolean(key), key).toBe(set[key] === 'true');
      else if (spec.kind === 'enum') expect(spec.values, key).toContain(c.getString(key));
      else expect(c.getString(key), key).toBe(spec.default);
    }
  });
});

describe('test-only crash points', () => {
  it('are refused unless test options are allowed', () => {
    expect(() => Configuration.of({ 'debug.crash.after-deploy': '3' })).toThrow(
      /'debug.crash.after-deploy' is a test-only option; set debug.allow-test-options=true to use it/,
    );
    const c = Configuration.of({
      'debug.allow-test-options': 'true',
      'debug.crash.before-event': 'ExecutionVertexFinished:3',
    });
    expect(c.getString('debug.crash.before-event')).toBe('ExecutionVertexFinished:3');
  });

  it('name an event type that exists', () => {
    const allow = { 'debug.allow-test-options': 'true' };
    expect(() => Configuration.of({ ...allow, 'debug.crash.after-event': 'ExecutionVertexDone:1' })).toThrow(
      /debug.crash.after-event: unknown event type 'ExecutionVertexDone'; it can never trigger: use one of ExecutionJobVertexInitialized, ExecutionVertexFinished, ExecutionVertexReset/,
    );
    expect(() => Configuration.of({ ...allow, 'debug.crash.after-event': 'ExecutionVertexFinished' })).toThrow(
      /is not <EventType>:<N>/,
    );
    expect(() => Configuration.of({ ...allow, 'debug.crash.after-event': 'ExecutionVertexFinished:0' })).toThrow(
      /N must be at least 1/,
    );
  });
});

describe('ranges', () => {
  it('refuse out-of-range values with the key and the range named', () => {
    expect(() => Configuration.of({ 'heartbeat.timeout': '0' })).toThrow(
      "heartbeat.timeout: '0' is out of range; use a value from 1 ms to 24 d",
    );
    expect(() => Configuration.of({ 'rpc.timeout': '0 s' })).toThrow(/rpc\.timeout: '0 s' is out of range/);
    expect(() => Configuration.of({ 'jobmaster.port': '70000' })).toThrow(
      "jobmaster.port: '70000' is out of range; use a value from 0 to 65535",
    );
    expect(() => Configuration.of({ 'taskmanager.numberOfTaskSlots': '-1' })).toThrow(
      /taskmanager\.numberOfTaskSlots: '-1' is out of range; use a value from 1 to 1024/,
    );
    expect(() => Configuration.of({ 'job-event.store.write-buffer.size': '0 b' })).toThrow(
      /write-buffer\.size: '0 b' is out of range; use a value from 1 b to 1 gb/,
    );
    expect(() => Configuration.of({ 'taskmanager.network.block-size': '-1 kb' })).toThrow(/is not a memory size/);
  });

  it('refuse a duration a timer cannot hold instead of letting it fire at once', () => {
    expect(() => Configuration.of({ 'taskmanager.registration.timeout': '30 d' })).toThrow(
      /taskmanager\.registration\.timeout: '30 d' is out of range/,
    );
    expect(
      Configuration.of({ 'taskmanager.registration.timeout': '24 d' }).getDurationMs(
        'taskmanager.registration.timeout',
      ),
    ).toBe(24 * 86_400_000);
  });

  it('bound every duration below what a Node timer holds, and hold every default', () => {
    for (const [key, range] of Object.entries(RANGES)) {
      const spec = OPTIONS[key as keyof typeof OPTIONS];
      if (spec.kind === 'duration') expect(range.max, key).toBeLessThanOrEqual(MAX_TIMER_MS);
      expect(range.min, key).toBeLessThanOrEqual(range.max);
    }
    // Every default is accepted by its own range (Configuration.of validates what it is given).
    const defaults = Object.fromEntries(
      Object.entries(OPTIONS)
        .filter(([, o]) => !('testOnly' in o))
        .map(([k, o]) => [k, o.default]),
    );
    expect(() => Configuration.of(defaults)).not.toThrow();
  });
});

describe('HTTP ports', () => {
  it('accepts 0 (any free port) to 65535 and rejects the rest with the key named', () => {
    expect(Configuration.of({ 'rest.port': '0' }).getInt('rest.port')).toBe(0);
    expect(Configuration.of({}).getInt('rest.port')).toBe(8081);
    expect(Configuration.of({}).getString('rest.bind-address')).toBe('127.0.0.1');
    expect(Configuration.of({ 'metrics.port': '65535' }).getInt('metrics.port')).toBe(65535);
    expect(() => Configuration.of({ 'rest.port': '65536' })).toThrow(
      "rest.port: '65536' is out of range; use a value from 0 to 65535",
    );
    expect(() => Configuration.of({ 'metrics.port': '-1' })).toThrow(/metrics\.port: '-1' is out of range/);
  });
});

describe('OPTIONS by area', () => {
  it('declares each key in one area only (a spread would let a later area override it)', () => {
    const declared = OPTION_AREAS.flatMap((area) => Object.keys(area));
    expect(declared.length).toBe(new Set(declared).size);
    expect(declared.length).toBe(Object.keys(OPTIONS).length);
  });
});
