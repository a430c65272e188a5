import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
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
      const stream = client.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, {}, new grpc.Metadata(), { deadline });
      stream.on('data', () => {});
      stream.on('error', (err: grpc.ServiceError) => resolve(err));
      stream.on('end', () => resolve('OK'));
    } else {
      client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, {}, new grpc.Metadata(), { deadline }, (err) =>
        resolve(err ?? 'OK'),
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
    // 5 Dispatcher + 6 JobMasterGateway + 6 TaskExecutorGateway (HeartbeatFromJobManager included)
    // + 1 PartitionService, twice.
    expect(refused).toHaveLength(36);
  });

  it('the CLI says which secret to use, and works with it', async () => {
    const noSecret = await runRebound(['list', '--ha-dir', cluster.haDir], { env: { REBOUND_AUTH_TOKEN_FILE: '' } });
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr.trim()).toMatch(/^rebound: .*refused: the call carries no cluster secret; set security\.auth\.token-file to the cluster's secret file$/);
    const withSecret = await runRebound(['list', '--ha-dir', cluster.haDir], { env: { REBOUND_AUTH_TOKEN_FILE: join(cluster.workdir, 'secret') } });
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
    const run = await cluster.submit('examples/wordcount.ts', ['--input', join(dir, 'in'), '--output', join(dir, 'out')], { wait: true });
    expect(run.code, run.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(join(dir, 'out')))).toEqual([]);
  });
});
