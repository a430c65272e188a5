import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { bindServer, CHANNEL_OPTIONS, shutdownServer } from './grpc.js';
import { checkHealth, HealthServices, HealthStatusManager, loadHealthProto, type ServingStatus } from './health.js';

describe('grpc.health.v1 service', () => {
  let server: grpc.Server | undefined;
  afterEach(async () => {
    if (server) await shutdownServer(server);
    server = undefined;
  });

  async function serve(health: HealthStatusManager): Promise<string> {
    server = new grpc.Server();
    server.addService(loadHealthProto().Health.service, health.handlers());
    const port = await bindServer(server, '127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  it('Check reports the status of each service, and NOT_FOUND for unknown names', async () => {
    const health = new HealthStatusManager({
      [HealthServices.server]: 'SERVING',
      [HealthServices.dispatcher]: 'NOT_SERVING',
    });
    const address = await serve(health);
    expect(await checkHealth(address, '', 5_000)).toBe('SERVING');
    expect(await checkHealth(address, HealthServices.dispatcher, 5_000)).toBe('NOT_SERVING');
    health.setStatus(HealthServices.dispatcher, 'SERVING');
    expect(await checkHealth(address, HealthServices.dispatcher, 5_000)).toBe('SERVING');
    await expect(checkHealth(address, 'no.such.Service', 5_000)).rejects.toThrow(/unknown service 'no.such.Service'/);
  });

  it('Watch streams the current status, then each change, and ends at shutdown with NOT_SERVING', async () => {
    const health = new HealthStatusManager({ [HealthServices.taskExecutor]: 'NOT_SERVING' });
    const address = await serve(health);
    const client = new (loadHealthProto().Health)(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    const seen: ServingStatus[] = [];
    const stream = client.Watch({ service: HealthServices.taskExecutor });
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    let wake: (() => void) | undefined;
    stream.on('data', (r: { status: ServingStatus }) => {
      seen.push(r.status);
      wake?.();
    });
    const until = (n: number): Promise<void> =>
      new Promise((resolve) => {
        if (seen.length >= n) resolve();
        else wake = () => seen.length >= n && resolve();
      });
    await until(1);
    health.setStatus(HealthServices.taskExecutor, 'SERVING');
    health.setStatus(HealthServices.taskExecutor, 'SERVING'); // no change, no message
    await until(2);
    health.shutdown();
    await ended;
    expect(seen).toEqual(['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
    // After shutdown nothing can mark the process ready again.
    health.setStatus(HealthServices.taskExecutor, 'SERVING');
    expect(health.getStatus(HealthServices.taskExecutor)).toBe('NOT_SERVING');
    client.close();
  });

  it('Watch of an unknown service says SERVICE_UNKNOWN instead of failing', async () => {
    const health = new HealthStatusManager();
    const address = await serve(health);
    const client = new (loadHealthProto().Health)(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    const stream = client.Watch({ service: 'later.Service' });
    const first = await new Promise<ServingStatus>((resolve, reject) => {
      stream.once('data', (r: { status: ServingStatus }) => resolve(r.status));
      stream.once('error', reject);
    });
    expect(first).toBe('SERVICE_UNKNOWN');
    stream.cancel();
    client.close();
  });

  it('checkHealth fails with UNAVAILABLE when nothing listens', async () => {
    const health = new HealthStatusManager({ '': 'SERVING' });
    const address = await serve(health);
    await shutdownServer(server!);
    server = undefined;
    await expect(checkHealth(address, '', 2_000)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
