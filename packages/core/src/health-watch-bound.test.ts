import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANNEL_OPTIONS, bindServer, shutdownServer } from './grpc.js';
import { HealthServices, HealthStatusManager, loadHealthProto, type ServingStatus } from './health.js';

type Outcome = { kind: 'data'; status: ServingStatus } | { kind: 'error'; code: number; details: string };

/** The health service needs no secret: its Watch streams are bounded (rpc.health.watch.max-streams). */
describe('health Watch stream bound', () => {
  let server: grpc.Server | undefined;
  const clients: grpc.Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    if (server) await shutdownServer(server);
    server = undefined;
  });

  async function serve(health: HealthStatusManager): Promise<string> {
    server = new grpc.Server();
    server.addService(loadHealthProto().Health.service, health.handlers());
    const port = await bindServer(server, '127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  function watch(address: string): { first: Promise<Outcome>; stream: grpc.ClientReadableStream<unknown> } {
    const client = new (loadHealthProto().Health)(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    clients.push(client);
    const stream = client.Watch({ service: HealthServices.server });
    const first = new Promise<Outcome>((resolve) => {
      stream.once('data', (r: { status: ServingStatus }) => resolve({ kind: 'data', status: r.status }));
      stream.once('error', (e: grpc.ServiceError) => resolve({ kind: 'error', code: e.code, details: e.details }));
    });
    return { first, stream };
  }

  it('refuses the stream beyond the bound with RESOURCE_EXHAUSTED, and accepts one again after a cancel', async () => {
    const health = new HealthStatusManager({ [HealthServices.server]: 'SERVING' }, { maxWatchStreams: 2 });
    const address = await serve(health);
    const a = watch(address);
    const b = watch(address);
    expect(await a.first).toEqual({ kind: 'data', status: 'SERVING' });
    expect(await b.first).toEqual({ kind: 'data', status: 'SERVING' });
    expect(health.watchStreams).toBe(2);
    const c = watch(address);
    expect(await c.first).toEqual({
      kind: 'error',
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'health Watch refused: 2 streams are open already (rpc.health.watch.max-streams)',
    });
    a.stream.on('error', () => undefined);
    a.stream.cancel();
    // The server sees the cancel asynchronously: wait for it, bounded.
    const deadline = Date.now() + 10_000;
    while (health.watchStreams > 1) {
      if (Date.now() > deadline) throw new Error('the server did not see the cancelled Watch within 10 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await watch(address).first).toEqual({ kind: 'data', status: 'SERVING' });
    b.stream.on('error', () => undefined);
    health.shutdown();
  });
});
