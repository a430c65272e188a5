#!/usr/bin/env node
// Container probes that ask a Rebound daemon's standard gRPC health service (grpc.health.v1,
// proto/grpc/health/v1/health.proto). Plain JavaScript, no tsx: it starts in a fraction of the
// CLI's time, so healthchecks every few seconds stay cheap.
//
//   node scripts/docker/health.mjs probe HOST:PORT [SERVICE]
//       exit 0 when SERVICE ("" = the whole process) is SERVING; else one line and exit 1
//   node scripts/docker/health.mjs await-leader [--timeout SECONDS]
//       waits until the recorded leader serves its Dispatcher (default 60 s, or
//       $REBOUND_CLIENT_WAIT); else one line saying why, and exit 1. The leader is recorded in
//       $REBOUND_HA_DIR/leader.json, or in etcd when $REBOUND_PROPERTIES says
//       high-availability.type: etcd (read through etcd's JSON gateway, /v3/kv/range)
//   node scripts/docker/health.mjs etcd URL
//       exit 0 when the etcd member at URL reports itself healthy (GET /health) and, when
//       $REBOUND_PROPERTIES names an etcd user, lets that user log in (auth is on); else one line
// Both present what $REBOUND_PROPERTIES's high-availability.etcd.* keys name, as the CLI does:
// the CA, the client certificate, the user and its password file.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { properties } from './rebound-properties.mjs';

const PROTO_ROOT = fileURLToPath(new URL('../../proto', import.meta.url));
// Generous: on a loaded machine a busy daemon can take seconds to answer, and that is not death.
const CHECK_DEADLINE_MS = 10_000;
const POLL_MS = 500;

function healthClient(address) {
  const def = protoLoader.loadSync('grpc/health/v1/health.proto', {
    keepCase: true,
    enums: String,
    defaults: true,
    includeDirs: [PROTO_ROOT],
  });
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

/**
 * What to show etcd (high-availability.etcd.tls.*, username, password-file), or a string saying
 * which file cannot be read.
 */
function etcdCredentials(props) {
  const read = (key) => {
    const path = props[`high-availability.etcd.${key}`];
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read high-availability.etcd.${key} ${path} (${err.code ?? err.message})`);
    }
  };
  try {
    const password = read('password-file');
    return {
      tls: { ca: read('tls.ca-file'), cert: read('tls.cert-file'), key: read('tls.key-file') },
      user: props['high-availability.etcd.username']
        ? { name: props['high-availability.etcd.username'], password: password?.toString('utf8').replace(/\r?\n$/, '') }
        : undefined,
    };
  } catch (err) {
    return err.message;
  }
}

/** One call to etcd's HTTP API: { status, body } (body parsed as JSON, {} when it is not); rejects when there is no answer. */
function etcdCall(url, { tls, token, body }) {
  const https = url.startsWith('https:');
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        ...(https ? tls : {}),
        headers: token ? { authorization: token } : {},
        timeout: CHECK_DEADLINE_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('error', reject);
        res.on('end', () => {
          let parsed = {};
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = { error: text.trim() };
          }
          resolve({ status: res.statusCode, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * A token for the configured user, undefined without one (or while auth is not enabled yet: etcd
 * then takes requests without); throws when etcd refuses the user.
 */
async function etcdToken(endpoint, creds) {
  if (!creds.user) return undefined;
  const login = await etcdCall(`${endpoint}/v3/auth/authenticate`, {
    tls: creds.tls,
    body: { name: creds.user.name, password: creds.user.password },
  });
  if (login.status === 200) return login.body.token;
  const why = String(login.body.error ?? `HTTP ${login.status}`);
  if (/authentication is not enabled/.test(why)) return undefined;
  throw Object.assign(new Error(`refused user '${creds.user.name}' (${why})`), { refused: true });
}

/** The leader record in etcd (`/<cluster-id>/leader`, epoch = its create revision), or a string saying why there is none. */
async function etcdLeader(props) {
  const endpoints = (props['high-availability.etcd.endpoints'] ?? '')
    .split(',')
    .map((e) => e.trim().replace(/\/$/, ''))
    .filter(Boolean);
  if (endpoints.length === 0)
    return 'high-availability.type is etcd but REBOUND_PROPERTIES sets no high-availability.etcd.endpoints';
  const key = `/${props['high-availability.cluster-id'] || 'default'}/leader`;
  const creds = etcdCredentials(props);
  // In compose: the etcd service makes these files at its first start.
  if (typeof creds === 'string') return `etcd ${endpoints.join(',')} cannot be asked yet: ${creds}`;
  const failures = [];
  for (const endpoint of endpoints) {
    let res;
    try {
      const token = await etcdToken(endpoint, creds);
      res = await etcdCall(`${endpoint}/v3/kv/range`, {
        tls: creds.tls,
        token,
        body: { key: Buffer.from(key).toString('base64') },
      });
    } catch (err) {
      if (err.refused) return `etcd ${endpoint} ${err.message}; fix high-availability.etcd.password-file or username`;
      failures.push(`${endpoint}: ${err.code ?? err.message}`);
      continue;
    }
    if (res.status !== 200) {
      failures.push(`${endpoint}: HTTP ${res.status}${res.body.error ? ` ${res.body.error}` : ''}`);
      continue;
    }
    const kv = res.body.kvs?.[0];
    if (!kv) return `no JobMaster has been elected (no ${key} in etcd ${endpoints.join(',')})`;
    let value;
    try {
      value = JSON.parse(Buffer.from(kv.value ?? '', 'base64').toString('utf8'));
    } catch {
      value = {};
    }
    if (typeof value.address !== 'string')
      return `etcd key ${key} is not a leader record; only Rebound JobMasters may write it`;
    return { jobmasterId: value.jobmasterId, address: value.address, epoch: Number(kv.create_revision) };
  }
  return `etcd ${endpoints.join(',')} does not answer (${failures.join('; ')})`;
}

/** The leader record in the HA directory, or a string saying why there is none. */
async function fileLeader(haDir) {
  try {
    return JSON.parse(await readFile(join(haDir, 'leader.json'), 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return `no JobMaster has been elected (no ${haDir}/leader.json)`;
    return `cannot read ${haDir}/leader.json: ${err.message}`;
  }
}

/** Why the cluster cannot take commands yet, or undefined when its leader serves. */
async function leaderProblem(haDir, props) {
  const leader = props['high-availability.type'] === 'etcd' ? await etcdLeader(props) : await fileLeader(haDir);
  if (typeof leader === 'string') return leader;
  const status = await check(leader.address, 'rebound.v1.Dispatcher');
  if (status === 'SERVING') return undefined;
  const why = status instanceof Error ? status.message : status;
  return `the leader ${leader.jobmasterId} at ${leader.address} (epoch ${leader.epoch}) does not serve: ${why}`;
}

async function awaitLeader(args) {
  const haDir = process.env.REBOUND_HA_DIR;
  const props = properties();
  if (!haDir && props['high-availability.type'] !== 'etcd')
    fail('rebound: REBOUND_HA_DIR is not set; the compose file sets it for every service');
  const i = args.indexOf('--timeout');
  const seconds = Number(i >= 0 ? args[i + 1] : (process.env.REBOUND_CLIENT_WAIT ?? 60));
  if (!Number.isFinite(seconds) || seconds < 0) fail('usage: health.mjs await-leader [--timeout SECONDS]');
  const deadline = Date.now() + seconds * 1_000;
  for (;;) {
    const problem = await leaderProblem(haDir, props);
    if (problem === undefined) process.exit(0);
    if (Date.now() + POLL_MS > deadline) {
      const files =
        props['high-availability.type'] === 'etcd' ? ' -f docker-compose.yml -f docker-compose.etcd.yml' : '';
      fail(
        `rebound: the cluster is not ready after ${seconds} s: ${problem}; start it with 'docker compose${files} up -d' and wait until 'docker compose${files} ps' shows the services healthy`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * The compose `etcd` service's healthcheck: the member's own /health (it has a leader, it serves)
 * and, with a user configured, that user's login: etcd is not healthy for Rebound until its
 * entry point (scripts/docker/etcd.mjs) has enabled auth, so no daemon starts on an open etcd.
 */
async function etcdHealth(url) {
  if (!url || !/^https?:\/\/\S+$/.test(url)) fail('usage: health.mjs etcd URL');
  const endpoint = url.replace(/\/$/, '');
  const creds = etcdCredentials(properties());
  if (typeof creds === 'string') fail(`etcd ${url}: ${creds}`);
  try {
    const res = await etcdCall(`${endpoint}/health`, { tls: creds.tls });
    if (res.status !== 200 || res.body.health !== 'true')
      fail(`etcd ${url}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    if (creds.user && (await etcdToken(endpoint, creds)) === undefined)
      fail(`etcd ${url}: auth is not enabled yet (scripts/docker/etcd.mjs enables it once the member answers)`);
    process.exit(0);
  } catch (err) {
    fail(`etcd ${url}: ${err.code ?? err.message}`);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'probe') await probe(rest[0], rest[1]);
else if (command === 'await-leader') await awaitLeader(rest);
else if (command === 'etcd') await etcdHealth(rest[0]);
else fail('usage: health.mjs probe HOST:PORT [SERVICE] | await-leader [--timeout SECONDS] | etcd URL');
