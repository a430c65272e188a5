/**
 * A bare leader contender on the etcd backend, for the multi-process fencing test:
 *   node --import tsx etcd-contender.ts <endpoints> <clusterId> <contenderId> <storageDir>
 * Prints `STARTED`, `GRANTED <epoch>`, `LAST-HEARD <ms since the epoch | none>` (when the
 * previous leader was last heard of, by this process's estimate), `STORED <jobId>` (a job stored under that epoch),
 * `REVOKED <reason>`. On a stdin line `WRITE`, writes an attachment of its last job with the
 * store of the last epoch it was granted, and prints `WRITE-OK` or `WRITE-REFUSED <message>`.
 * On `PUBLISH`, publishes its endpoint (role taskmanager) and prints `PUBLISHED`.
 */
import { createInterface } from 'node:readline';
import { Configuration, errorMessage, silentLogger } from '@rebound/core';
import { createHaServices } from '../ha-services-factory.js';
import type { JobGraphStore } from '../ha-services.js';

const [endpoints, clusterId, contenderId, storageDir] = process.argv.slice(2);
if (!endpoints || !clusterId || !contenderId || !storageDir) {
  process.stderr.write('usage: etcd-contender.ts <endpoints> <clusterId> <contenderId> <storageDir>\n');
  process.exit(2);
}
const ha = createHaServices(
  Configuration.of({
    'high-availability.type': 'etcd',
    'high-availability.etcd.endpoints': endpoints,
    'high-availability.cluster-id': clusterId,
    'high-availability.lease.timeout': '2 s',
    'high-availability.lease.renew-interval': '300 ms',
    'high-availability.lease.poll-interval': '200 ms',
    'high-availability.etcd.request-timeout': '3 s',
  }),
  storageDir,
);
const election = ha.createLeaderElectionService({ contenderId, address: `${contenderId}:1`, logger: silentLogger() });
let store: JobGraphStore | undefined;
let jobId = '';

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'PUBLISH') {
    void ha
      .endpoints()
      .publish({ id: contenderId, role: 'taskmanager', address: `${contenderId}:1`, startedAtMs: Date.now() })
      .then(() => process.stdout.write('PUBLISHED\n'));
    return;
  }
  if (line.trim() !== 'WRITE' || !store) return;
  store.putJobAttachment(jobId, 'written-by', contenderId).then(
    () => process.stdout.write('WRITE-OK\n'),
    (err: unknown) => process.stdout.write(`WRITE-REFUSED ${errorMessage(err)}\n`),
  );
});
process.on('SIGTERM', () => {
  void election
    .stop()
    .then(() => ha.close())
    .then(() => process.exit(0));
});

await election.start({
  async grantLeadership(epoch) {
    process.stdout.write(`GRANTED ${epoch}\n`);
    process.stdout.write(`LAST-HEARD ${election.previousLeaderLastHeardMs() ?? 'none'}\n`);
    store = ha.leaderJobGraphStore(epoch);
    jobId = `job-${contenderId}-${epoch}`;
    await store.putJob({ job_id: jobId, name: jobId, submitted_at_ms: 1 }, new Uint8Array());
    process.stdout.write(`STORED ${jobId}\n`);
  },
  revokeLeadership(reason) {
    process.stdout.write(`REVOKED ${reason}\n`);
  },
});
process.stdout.write('STARTED\n');
