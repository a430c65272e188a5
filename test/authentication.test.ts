import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { lstat, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { isProcessAlive } from '@rebound/cli';
import { ClusterSecurity, Configuration, ErrorCode, fromServiceError, loadProto } from '@rebound/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, REPO_ROOT, runRebound, suiteFailed } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

interface MethodDef {
  readonly path: string;
  readonly responseStream: boolean;
  readonly requestSerialize: (value: object) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => unknown;
}

/** Calls `method` with an empty request and resolves with the error it ends with (or 'OK'). */
function callRaw(client: grpc.Client, method: MethodDef): Promise<grpc.ServiceError | 'OK'> {
  const deadline = Date.now() + 10_000;
  return new Promise((resolve) => {
    if (method.responseStream) {
      const stream = client.makeServerStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        {},
        new grpc.Metadata(),
        { deadline },
      );
      stream.on('data', () => {});
      stream.on('error', (err: grpc.ServiceError) => resolve(err));
      stream.on('end', () => resolve('OK'));
    } else {
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        {},
        new grpc.Metadata(),
        { deadline },
        (err) => resolve(err ?? 'OK'),
      );
    }
  });
}

/**
 * `rebound local up` clusters are closed by default: every method of every service refuses a call
 * without the cluster secret, or with a wrong one, before any handler runs.
 */
describe('authentication', () => {
  let cluster: LocalCluster;
  let dir: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 1, slots: 1 });
    dir = await makeTempDir('rebound-it-auth-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses every RPC without the secret or with a wrong one, with UNAUTHENTICATED', async () => {
    const wrongFile = join(dir, 'wrong-secret');
    await writeFile(wrongFile, 'not-the-cluster-secret-at-all\n', { mode: 0o600 });
    const wrong = ClusterSecurity.of(Configuration.of({ 'security.auth.token-file': wrongFile }));
    const proto = loadProto();
    const processes = await cluster.processes();
    const jm = processes.find((p) => p.role === 'jobmaster')!;
    const tm = processes.find((p) => p.role === 'taskmanager')!;
    const targets = [
      { address: jm.address, services: [proto.Dispatcher, proto.JobMasterGateway] },
      { address: tm.address, services: [proto.TaskExecutorGateway, proto.PartitionService] },
    ];
    const refused: string[] = [];
    for (const { address, services } of targets) {
      for (const security of [ClusterSecurity.none(), wrong]) {
        const client = new grpc.Client(address, security.channelCredentials(), security.channelOptions());
        try {
          for (const service of services) {
            for (const method of Object.values(service.service) as MethodDef[]) {
              const outcome = await callRaw(client, method);
              expect(outcome, method.path).not.toBe('OK');
              const err = outcome as grpc.ServiceError;
              expect(err.code, `${method.path}: ${err.details}`).toBe(grpc.status.UNAUTHENTICATED);
              expect(fromServiceError(err).code).toBe(ErrorCode.UNAUTHENTICATED);
              refused.push(method.path);
            }
          }
        } finally {
          client.close();
        }
      }
    }
    // 6 Dispatcher (the FetchJobResult stream included) + 6 JobMasterGateway + 6
    // TaskExecutorGateway (HeartbeatFromJobManager included) + 1 PartitionService, twice.
    expect(refused).toHaveLength(38);
  });

  it('a malformed cookie, header or query is no credential: 401 from both servers, both stay up', async () => {
    const processes = await cluster.processes();
    const jm = processes.find((p) => p.role === 'jobmaster')!;
    const tm = processes.find((p) => p.role === 'taskmanager')!;
    const bad: Record<string, string>[] = [
      { cookie: 'rebound_token=%' },
      { cookie: 'rebound_token=%E0%A4%A' },
      { cookie: 'rebound_session=%; rebound_token=%ff' },
      { cookie: '=;;=%;rebound_token' },
      { authorization: 'Bearer %' },
      { authorization: 'Basic' },
    ];
    for (const base of [`${jm.restUrl!}/overview`, `${tm.metricsUrl!}/metrics`, `${jm.restUrl!}/overview?token=%`]) {
      for (const headers of bad) {
        const res = await fetch(base, { headers, signal: AbortSignal.timeout(10_000) });
        expect(res.status, `${base} ${JSON.stringify(headers)}`).toBe(401);
        await res.body?.cancel();
      }
    }
    // The daemons are alive and serve a good credential.
    for (const url of [`${jm.restUrl!}/overview`, `${tm.metricsUrl!}/metrics`]) {
      const res = await fetch(url, { headers: cluster.security().httpHeaders(), signal: AbortSignal.timeout(10_000) });
      expect(res.status, url).toBe(200);
      await res.body?.cancel();
    }
    for (const p of processes) expect(isProcessAlive(p.pid, p.id), p.id).toBe(true);
  });

  it('the CLI says which secret to use, and works with it', async () => {
    const noSecret = await runRebound(['list', '--ha-dir', cluster.haDir], { env: { REBOUND_AUTH_TOKEN_FILE: '' } });
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr.trim()).toMatch(
      /^rebound: .*refused: the call carries no cluster secret; set security\.auth\.token-file to the cluster's secret file$/,
    );
    const withSecret = await runRebound(['list', '--ha-dir', cluster.haDir], {
      env: { REBOUND_AUTH_TOKEN_FILE: join(cluster.workdir, 'secret') },
    });
    expect(withSecret.code, withSecret.stderr).toBe(0);
    // Through the work directory (cluster.json) the CLI finds the secret by itself.
    const viaWorkdir = await cluster.rebound(['list']);
    expect(viaWorkdir.code, viaWorkdir.stderr).toBe(0);
  });
});

describe('mutual TLS', () => {
  let cluster: LocalCluster;
  let dir: string;

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a local cluster with security.ssl.internal.* runs a job end to end', async () => {
    dir = await makeTempDir('rebound-it-tls-');
    const certs = join(dir, 'certs');
    execFileSync('bash', [join(REPO_ROOT, 'scripts', 'make-certs.sh'), certs]);
    cluster = await LocalCluster.start({
      jobmasters: 1,
      taskmanagers: 2,
      slots: 2,
      config: {
        'security.ssl.internal.enabled': 'true',
        'security.ssl.internal.ca': join(certs, 'ca.pem'),
        'security.ssl.internal.cert': join(certs, 'cert.pem'),
        'security.ssl.internal.key': join(certs, 'key.pem'),
      },
    });
    const files = await generateTextFiles(join(dir, 'in'), { files: 3, linesPerFile: 80, seed: 5 });
    const run = await cluster.submit(
      'examples/wordcount.ts',
      ['--input', join(dir, 'in'), '--output', join(dir, 'out')],
      { wait: true },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(join(dir, 'out')))).toEqual([]);
  });

  it('refuses a client without a certificate, or with one the cluster CA did not sign, before any RPC', async () => {
    const strangers = join(dir, 'strangers');
    execFileSync('bash', [join(REPO_ROOT, 'scripts', 'make-certs.sh'), strangers]);
    const secret = { 'security.auth.token-file': join(cluster.workdir, 'secret') };
    const certs = join(dir, 'certs');
    const tls = (d: string) =>
      ClusterSecurity.fromConfig(
        Configuration.of({
          ...secret,
          'security.ssl.internal.enabled': 'true',
          'security.ssl.internal.ca': join(certs, 'ca.pem'),
          'security.ssl.internal.cert': join(d, 'cert.pem'),
          'security.ssl.internal.key': join(d, 'key.pem'),
        }),
      );
    const proto = loadProto();
    const jm = (await cluster.processes()).find((p) => p.role === 'jobmaster')!;
    const listJobs = (credentials: grpc.ChannelCredentials, security: ClusterSecurity) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        const client = new proto.Dispatcher(jm.address, credentials, security.channelOptions());
        client.ListJobs({}, { deadline: Date.now() + 10_000 }, (err) => {
          client.close();
          resolve(err);
        });
      });
    const withSecret = ClusterSecurity.fromConfig(Configuration.of(secret));
    // The cluster's own certificate: served.
    const member = tls(certs);
    expect(await listJobs(member.channelCredentials(), member)).toBeNull();
    // TLS that trusts the cluster CA but presents no client certificate, another CA's certificate,
    // and plain text: no call gets through, although each carries the cluster secret.
    const ca = readFileSync(join(certs, 'ca.pem'));
    for (const [what, credentials] of [
      ['no client certificate', grpc.credentials.createSsl(ca)],
      [
        'a certificate of another CA',
        grpc.credentials.createSsl(
          ca,
          readFileSync(join(strangers, 'key.pem')),
          readFileSync(join(strangers, 'cert.pem')),
        ),
      ],
      ['plain text', grpc.credentials.createInsecure()],
    ] as const) {
      const err = await listJobs(credentials, withSecret);
      expect(err, what).not.toBeNull();
      expect(err!.code, `${what}: ${err!.details}`).toBe(grpc.status.UNAVAILABLE);
    }
  });

  it('leaves nothing in the work directory that another local user can read', async () => {
    const open: string[] = [];
    const walk = async (path: string): Promise<void> => {
      const st = await lstat(path);
      if (st.isSymbolicLink()) return;
      const want = st.isDirectory() ? 0o700 : 0o600;
      if ((st.mode & 0o777) !== want) open.push(`${(st.mode & 0o777).toString(8)} ${path}`);
      if (st.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    };
    await walk(cluster.workdir);
    expect(open).toEqual([]);
  });
});
