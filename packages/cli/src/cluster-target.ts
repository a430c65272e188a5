import { resolve } from 'node:path';
import { ConfigError, Configuration, ReboundError, withContext } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices } from '@rebound/ha';
import { readClusterFile, type ClusterFile } from './cluster-file.js';
import { DEFAULT_WORKDIR, HA_DIR_ENV } from './names.js';
import { propertiesFromEnv } from './env-properties.js';

/** How a command finds the cluster: `--cluster WORKDIR` (default ./.rebound), `--ha-dir`, or `--address`. */
export interface ClusterTargetOptions {
  readonly cluster?: string;
  readonly haDir?: string;
  readonly address?: string;
}

export type ClusterTarget =
  | { readonly kind: 'cluster'; readonly workdir: string; readonly haDir: string; readonly file: ClusterFile }
  | { readonly kind: 'ha'; readonly haDir: string }
  | { readonly kind: 'address'; readonly address: string };

/**
 * Resolves the command-line options to a target. `--address` wins over `--ha-dir`, which wins over
 * `--cluster`, which wins over `$REBOUND_HA_DIR`; the default is `--cluster ./.rebound`. Fails at
 * once (no retrying) when the cluster or HA directory does not exist.
 */
export async function resolveClusterTarget(
  opts: ClusterTargetOptions,
  cwd = process.cwd(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ClusterTarget> {
  if (opts.address) {
    if (!/^[^\s:]+:\d+$/.test(opts.address) && !/^\[[0-9a-fA-F:]+\]:\d+$/.test(opts.address)) {
      throw new ConfigError(`--address ${opts.address}: expected HOST:PORT`);
    }
    return { kind: 'address', address: opts.address };
  }
  // An HA directory names the cluster; the backend its leader is recorded in is the configured one
  // (`$REBOUND_PROPERTIES` under compose): the file lease there, or etcd.
  if (opts.haDir) {
    const target: ClusterTarget = { kind: 'ha', haDir: resolve(cwd, opts.haDir) };
    await withHaServices(target, (ha) => ha.assertUsable());
    return target;
  }
  const fromEnv = env[HA_DIR_ENV];
  if (opts.cluster === undefined && fromEnv) {
    const target: ClusterTarget = { kind: 'ha', haDir: resolve(cwd, fromEnv) };
    await withHaServices(target, (ha) => ha.assertUsable()).catch((err: unknown) => {
      // Only the file backend's complaint is about the directory the variable names.
      throw err instanceof ReboundError && clientConfiguration(target).getString('high-availability.type') === 'file'
        ? withContext(err, `${HA_DIR_ENV}=${fromEnv}: ${err.message}`)
        : err;
    });
    return target;
  }
  const workdir = resolve(cwd, opts.cluster ?? DEFAULT_WORKDIR);
  const file = await readClusterFile(workdir);
  const haDir = resolve(workdir, file.haDir);
  const target: ClusterTarget = { kind: 'cluster', workdir, haDir, file };
  await withHaServices(target, (ha) => ha.assertUsable());
  return target;
}

/**
 * The HA services a target's leader and jobs are found through: the backend its configuration
 * names (a local cluster's cluster.json carries `high-availability.*`), else the file backend.
 */
export function haServicesOf(target: Exclude<ClusterTarget, { kind: 'address' }>): HighAvailabilityServices {
  return createHaServices(clientConfiguration(target), target.haDir);
}

/** Runs `fn` with the target's HA services, closed afterwards (an etcd client would keep the process alive). */
export async function withHaServices<T>(
  target: Exclude<ClusterTarget, { kind: 'address' }>,
  fn: (ha: HighAvailabilityServices) => Promise<T>,
): Promise<T> {
  const ha = haServicesOf(target);
  try {
    return await fn(ha);
  } finally {
    await ha.close();
  }
}

/** The HA directory of a target, for commands that read it directly (`rebound events`). */
export function haDirOf(target: ClusterTarget): string | undefined {
  return target.kind === 'address' ? undefined : target.haDir;
}

/**
 * The client-side configuration: a local cluster's `-D` values (so a cluster started with short
 * timeouts is also polled with them), then the command's own overrides.
 */
export function clientConfiguration(
  target: ClusterTarget | undefined,
  overrides: Record<string, string> = {},
): Configuration {
  let base = Configuration.empty();
  if (target?.kind === 'cluster') {
    try {
      base = Configuration.of({ ...target.file.config });
    } catch {
      // A cluster.json edited by hand with a bad value: the daemons reject it; the client uses defaults.
    }
  }
  // A cluster reached by --ha-dir or --address (compose, another host) names its secret here.
  const tokenFile = process.env.REBOUND_AUTH_TOKEN_FILE;
  if (
    tokenFile &&
    !base.toRecord()['security.auth.token-file'] &&
    overrides['security.auth.token-file'] === undefined
  ) {
    base = base.with({ 'security.auth.token-file': tokenFile });
  }
  // ... and its HA backend here (compose's etcd variant), as the daemons read it.
  return base.with(propertiesFromEnv()).with(overrides);
}
