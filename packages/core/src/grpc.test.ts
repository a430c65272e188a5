import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration } from './config.js';
import { ErrorCode, fromServiceError, NotLeaderError } from './errors.js';
import { bindServer, handleUnary, shutdownServer, unary } from './grpc.js';
import { loadProto } from './proto.js';
import { ClusterSecurity } from './security.js';

describe('handleUnary', () => {
  const SECRET = 's'.repeat(40);
  const JOB_ID = 'job-marker-7f3a';
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-grpc-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a handler bug with INTERNAL and one error line naming the method, not the request or the secret', async () => {
    const secretPath = join(dir, 'secret');
    await writeFile(secretPath, SECRET);
    await chmod(secretPath, 0o600);
    const security = ClusterSecurity.fromConfig(Configuration.of({ 'security.auth.token-file': secretPath }));
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const proto = loadProto();
    const server = new grpc.Server(security.serverOptions());
    server.addService(proto.Dispatcher.service, {
      GetJobStatus: handleUnary(() => {
        throw new TypeError("Cannot read properties of undefined (reading 'state')");
      }, logger),
      ListJobs: handleUnary(() => Promise.reject(new NotLeaderError('not the leader')), logger),
    });
    const port = await bindServer(server, '127.0.0.1', 0, security.serverCredentials());
    const client = new proto.Dispatcher(`127.0.0.1:${port}`, security.channelCredentials(), security.channelOptions());
    try {
      const failure = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (e: unknown) => fromServiceError(e),
        );
      const bug = await failure(unary(client, client.GetJobStatus, { job_id: JOB_ID }, 5_000));
      expect(bug?.code).toBe(ErrorCode.INTERNAL);
      // A ReboundError is an answer the handler chose: its status, and nothing logged.
      const answer = await failure(unary(client, client.ListJobs, {}, 5_000));
      expect(answer?.code).toBe(ErrorCode.NOT_LEADER);

      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]!) as { level: number; method: string; err: { message: string } };
      expect(line.level).toBe(50);
      expect(line.method).toBe('/rebound.v1.Dispatcher/GetJobStatus');
      expect(line.err.message).toMatch(/reading 'state'/);
      expect(lines[0]).not.toContain(JOB_ID);
      expect(lines[0]).not.toContain(SECRET);
      // The server still answers after the bug.
      expect((await failure(unary(client, client.GetJobStatus, { job_id: JOB_ID }, 5_000)))?.code).toBe(
        ErrorCode.INTERNAL,
      );
      expect(lines).toHaveLength(2);
    } finally {
      client.close();
      await shutdownServer(server);
    }
  });
});
