import * as grpc from '@grpc/grpc-js';
import { bindServer, ErrorCode, fromServiceError, JobNotFoundError, loadProto, shutdownServer } from '@rebound/core';
import type { JobResultChunk, ReboundError } from '@rebound/core';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { handleResultStream } from './result-stream.js';

describe('handleResultStream', () => {
  it('ends a stream whose reader has a bug with INTERNAL and one error line naming the method', async () => {
    const JOB_ID = 'job-marker-51c2';
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    let bug = true;
    const proto = loadProto();
    const server = new grpc.Server();
    server.addService(proto.Dispatcher.service, {
      FetchJobResult: handleResultStream(async (): Promise<AsyncGenerator<JobResultChunk>> => {
        if (bug) throw new TypeError("Cannot read properties of undefined (reading 'sink')");
        throw new JobNotFoundError(`job ${JOB_ID} not found`);
      }, logger),
    });
    const port = await bindServer(server, '127.0.0.1', 0);
    const client = new proto.Dispatcher(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const fetch = (): Promise<ReboundError> =>
      new Promise((resolve, reject) => {
        const stream = client.FetchJobResult({ job_id: JOB_ID });
        stream.on('data', () => reject(new Error('no chunk expected')));
        stream.on('error', (err) => resolve(fromServiceError(err)));
        stream.on('end', () => reject(new Error('the stream ended without a status')));
      });
    try {
      expect((await fetch()).code).toBe(ErrorCode.INTERNAL);
      bug = false;
      expect((await fetch()).code).toBe(ErrorCode.JOB_NOT_FOUND);
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]!) as { level: number; method: string; err: { message: string } };
      expect(line.level).toBe(50);
      expect(line.method).toBe('/rebound.v1.Dispatcher/FetchJobResult');
      expect(line.err.message).toMatch(/reading 'sink'/);
      expect(lines[0]).not.toContain(JOB_ID);
    } finally {
      client.close();
      await shutdownServer(server);
    }
  });
});
