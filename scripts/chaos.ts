/**
 * `npm run chaos -- --seed S --runs N [--faults LIST] [--job NAME] [--json FILE]`: the seeded
 * chaos harness (packages/chaos/README.md). Exit code 0 when every run passed, 1 when any run
 * failed (wrong or duplicate output, lost or stuck job, unfenced leader, a durable finished task
 * rerun on a live TaskManager), 2 for a bad command line, 3 when no run failed but the batch is
 * no pass (cut short by --time-budget, or no fault injected).
 */
import * as grpc from '@grpc/grpc-js';
import {
  ChaosUsageError,
  USAGE,
  cleanupPartitionsSync,
  commandLine,
  killLiveClusters,
  parseChaosArgs,
  partitionsUnavailableReason,
  runChaos,
  sweepStalePartitions,
} from '@rebound/chaos';
import { errorMessage } from '@rebound/core';
import { etcdAvailable } from '@rebound/ha/testing';

// Calls to a JobMaster the harness just killed fail by design; grpc-js must not log each one.
grpc.setLogVerbosity(grpc.logVerbosity.NONE);

const argv = process.argv.slice(2);
let opts;
try {
  opts = parseChaosArgs(argv);
} catch (err) {
  if (err instanceof ChaosUsageError) {
    process.stderr.write(`chaos: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
if (opts.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (opts.ha === 'etcd' && !etcdAvailable()) {
  process.stderr.write(
    `chaos: --ha etcd needs etcd 3 at ${process.env.REBOUND_ETCD_BIN ?? '/usr/bin/etcd'} (apt-get install etcd-server, or set REBOUND_ETCD_BIN)\n`,
  );
  process.exit(2);
}
if (opts.partitions) {
  const why = partitionsUnavailableReason();
  if (why) {
    process.stderr.write(`chaos: --partitions is not possible here: ${why}\n`);
    process.exit(2);
  }
  // Tables and cgroups of a harness that was SIGKILLed.
  sweepStalePartitions();
}
const options = opts;
// Daemons are detached: an interrupted harness must not leave clusters (or network cuts) behind.
// etcd members are this process's children: startEtcdCluster kills them on exit.
const cleanup = (): void => {
  cleanupPartitionsSync();
  killLiveClusters();
};
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}
try {
  const report = await runChaos(options, commandLine(argv), {
    out: (l) => process.stdout.write(`${l}\n`),
    progress: (l) => process.stderr.write(`${l}\n`),
  });
  process.exit(report.exitCode);
} catch (err) {
  process.stderr.write(`chaos: ${errorMessage(err)}\n`);
  process.exit(1);
}
