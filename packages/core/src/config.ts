import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ConfigError } from './errors.js';
import { OPTIONS, type ConfigKey } from './config/options.js';
import { parseDuration, parseMemorySize } from './config/units.js';
import { validate } from './config/validate.js';

// The keys by area are in config/options-*.ts; parsing and validation beside them.
export { OPTIONS, RANGES, type ConfigKey } from './config/options.js';
export { MAX_TIMER_MS } from './config/option-spec.js';
export { parseDuration, parseMemorySize } from './config/units.js';
export { closestMatch } from './config/validate.js';

type YamlModule = { parse(text: string): unknown };
let yaml: YamlModule | undefined;

// Loaded on the first config file only: every command and daemon imports this module, and most
// of them are given no file; yaml is ~0.08 CPU-s of a `rebound --help` that must start like a
// native tool. A synchronous require keeps `fromYamlFile` synchronous (yaml ships CommonJS).
function loadYaml(): YamlModule {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yaml;
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
      doc = loadYaml().parse(text);
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
