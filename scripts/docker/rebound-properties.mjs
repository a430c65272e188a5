// Plain JavaScript shared by the container scripts (health.mjs, etcd.mjs): they run before and
// without the CLI.

/**
 * $REBOUND_PROPERTIES as the CLI reads it (packages/cli/src/env-properties.ts): `key: value` lines,
 * split at the first colon. Only the HA keys matter here; the CLI validates the rest.
 */
export function properties() {
  const out = {};
  for (const raw of (process.env.REBOUND_PROPERTIES ?? '').split(/\r?\n/)) {
    const line = raw.trim();
    const colon = line.indexOf(':');
    if (line === '' || line.startsWith('#') || colon <= 0) continue;
    out[line.slice(0, colon).trim()] = line
      .slice(colon + 1)
      .trim()
      .replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}
