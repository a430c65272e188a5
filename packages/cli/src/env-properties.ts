import { ConfigError, Configuration } from '@rebound/core';

/**
 * Configuration for processes started by a container runtime (Flink's FLINK_PROPERTIES): one
 * `key: value` per line, the flat keys of a configuration file. Daemons apply it after --config and
 * before -D; every client command applies it too, so one variable in a compose file points the
 * daemons and the `client` service at the same HA backend (docker-compose.etcd.yml sets it).
 */
export const PROPERTIES_ENV = 'REBOUND_PROPERTIES';

/** The validated properties of `$REBOUND_PROPERTIES`; empty when it is unset or blank. */
export function propertiesFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const text = env[PROPERTIES_ENV];
  if (!text) return {};
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    // Split at the first colon: keys have none, values (URLs) may.
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ConfigError(`${PROPERTIES_ENV} line ${i + 1} '${line}': expected 'key: value'`);
    const key = line.slice(0, colon).trim();
    const value = unquote(line.slice(colon + 1).trim());
    try {
      // Each line on its own first, so that the error names the line; test-only keys are judged
      // with the whole set below (debug.allow-test-options may come on a later line).
      Configuration.of({ 'debug.allow-test-options': 'true', [key]: value });
    } catch (err) {
      throw new ConfigError(`${PROPERTIES_ENV} line ${i + 1} '${line}': ${(err as Error).message}`);
    }
    out[key] = value;
  }
  try {
    Configuration.of(out);
  } catch (err) {
    throw new ConfigError(`${PROPERTIES_ENV}: ${(err as Error).message}`);
  }
  return out;
}

/** YAML's quoting of a scalar, for values written `key: "a b"`. */
function unquote(value: string): string {
  const q = value[0];
  return (q === '"' || q === "'") && value.length >= 2 && value.endsWith(q) ? value.slice(1, -1) : value;
}
