/**
 * A bare leader contender for the multi-process election tests:
 *   node --import tsx contender.ts <haDir> <contenderId>
 * Prints `STARTED`, `GRANTED <epoch>` and `REVOKED <reason>` lines on stdout.
 * Lease settings come from REBOUND_TEST_LEASE (timeout,renew,poll in ms; default 500,100,100).
 */
import { Configuration, silentLogger } from '@rebound/core';
import { LeaderElectionService } from '../file/file-leader-election-driver.js';

const [haDir, contenderId] = process.argv.slice(2);
if (!haDir || !contenderId) {
  process.stderr.write('usage: contender.ts <haDir> <contenderId>\n');
  process.exit(2);
}
const [timeout, renew, poll] = (process.env.REBOUND_TEST_LEASE ?? '500,100,100').split(',');
const config = Configuration.of({
  'high-availability.lease.timeout': `${timeout} ms`,
  'high-availability.lease.renew-interval': `${renew} ms`,
  'high-availability.lease.poll-interval': `${poll} ms`,
});
const service = new LeaderElectionService({
  haDir,
  contenderId,
  address: `${contenderId}:1`,
  config,
  logger: silentLogger(),
});

process.on('SIGTERM', () => {
  void service.stop().then(() => process.exit(0));
});

await service.start({
  grantLeadership(epoch) {
    process.stdout.write(`GRANTED ${epoch}\n`);
  },
  revokeLeadership(reason) {
    process.stdout.write(`REVOKED ${reason}\n`);
  },
});
process.stdout.write('STARTED\n');
