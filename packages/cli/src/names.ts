/**
 * Names the help text shows. A module of constants only, so that `rebound --help` does not load
 * the HA services (client.ts) or gRPC (cluster-file.ts) to print them.
 */

/**
 * The HA directory a client uses when no option names the cluster: containers and scripts set it
 * once (the compose file's `client` service does) instead of passing --ha-dir to every command.
 */
export const HA_DIR_ENV = 'REBOUND_HA_DIR';

/** The work directory of `rebound local` and the cluster a client command targets by default. */
export const DEFAULT_WORKDIR = '.rebound';
