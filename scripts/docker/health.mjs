#!/usr/bin/env node
// Container probes that ask a Rebound daemon's standard gRPC health service (grpc.health.v1,
// proto/grpc/health/v1/health.proto). Plain JavaScript, no tsx: it starts in a fraction of the
// CLI's time, so healthchecks every few seconds stay cheap.
//
//   node scripts/docker/health.mjs probe HOST:PORT [SERVICE]
//       exit 0 when SERVICE ("" = the whole process) is SERVING; else one line and exit 1
//   node scripts/docker/health.mjs await-leader [--timeout SECONDS]
//       waits until the leader named in $REBOUND_HA_DIR/leader.json serves its Dispatcher
//       (default 60 s, or $REBOUND_CLIENT_WAIT); else one line saying why, and exit 1
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO_ROOT = fileURLToPath(new URL('../../proto', import.meta.url));
// Generous: on a loaded machine a busy daemon can take seconds to answer, and that is not death.
const CHECK_DEADLINE_MS = 10_000;
const POLL_MS = 500;

function healthClient(address) {
  const def = protoLoader.loadSync('grpc/health/v1/health.proto', { keepCase: true, enums: String, defaults: true, includeDirs: [PROTO_ROOT] });
  const { Health } = grpc.loadPackageDefinition(def).grpc.health.v1;
  return new Health(address, grpc.credentials.createInsecure());
}

/** The status of `service` at `address`, or an Error saying why there is none. */
function check(address, service) {
  const client = healthClient(address);
  return new Promise((resolve) => {
    client.Check({ service }, { deadline: Date.now() + CHECK_DEADLINE_MS }, (err, res) => {
      client.close();
      // grpc-js appends an empty "Resolution note:" to connection failures.
      resolve(err ? new Error((err.details || err.message).replace(/\s*Resolution note:\s*$/, '')) : res.status);
    });
  });
}

function fail(line) {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

async function probe(address, service = '') {
  if (!address || !/^[^\s:]+:\d+$/.test(address)) fail('usage: health.mjs probe HOST:PORT [SERVICE]');
  const status = await check(address, service);
  if (status === 'SERVING') process.exit(0);
  fail(`${address} ${service || '(server)'}: ${status instanceof Error ? status.message : status}`);
}

/** Why the cluster cannot take commands yet, or undefined when its leader serves. */
async function leaderProblem(haDir) {
  let leader;
  try {
    leader = JSON.parse(await readFile(join(haDir, 'leader.json'), 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return `no JobMaster has been elected (no ${haDir}/leader.json)`;
    return `cannot read ${haDir}/leader.json: ${err.message}`;
  }
  const status = await check(leader.address, 'rebound.v1.Dispatcher');
  if (status === 'SERVING') return undefined;
  const why = status instanceof Error ? status.message : status;
  return `the leader ${leader.jobmasterId} at ${leader.address} (epoch ${leader.epoch}) does not serve: ${why}`;
}

async function awaitLeader(args) {
  const haDir = process.env.REBOUND_HA_DIR;
  if (!haDir) fail('rebound: REBOUND_HA_DIR is not set; the compose file sets it for every service');
  const i = args.indexOf('--timeout');
  const seconds = Number(i >= 0 ? args[i + 1] : (process.env.REBOUND_CLIENT_WAIT ?? 60));
  if (!Number.isFinite(seconds) || seconds < 0) fail('usage: health.mjs await-leader [--timeout SECONDS]');
  const deadline = Date.now() + seconds * 1_000;
  for (;;) {
    const problem = await leaderProblem(haDir);
    if (problem === undefined) process.exit(0);
    if (Date.now() + POLL_MS > deadline) {
      fail(`rebound: the cluster is not ready after ${seconds} s: ${problem}; start it with 'docker compose up -d' and wait until 'docker compose ps' shows the services healthy`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'probe') await probe(rest[0], rest[1]);
else if (command === 'await-leader') await awaitLeader(rest);
else fail('usage: health.mjs probe HOST:PORT [SERVICE] | await-leader [--timeout SECONDS]');
