import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration } from './config.js';
import { ErrorCode, fromServiceError } from './errors.js';
import { bindServer, handleUnary, shutdownServer, unary } from './grpc.js';
import { silentLogger } from './logger.js';
import { loadProto } from './proto.js';
import { AUTH_METADATA_KEY, ClusterSecurity } from './security.js';

describe('ClusterSecurity', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-security-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const secretFile = async (name: string, text: string, mode = 0o600): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, text);
    await chmod(path, mode);
    return path;
  };
  const of = (path: string) => ClusterSecurity.fromConfig(Configuration.of({ 'security.auth.token-file': path }));

  it('refuses a secret file others can read, a short secret and a missing file, naming the fix', async () => {
    expect(() => of(join(dir, 'missing'))).toThrow(
      /cannot read .*missing \(ENOENT\); point it at the cluster's secret file/,
    );
    const open = await secretFile('open', 'a'.repeat(64), 0o644);
    expect(() => of(open)).toThrow(/is readable by other users; chmod 600 it/);
    const short = await secretFile('short', 'abc');
    expect(() => of(short)).toThrow(/holds a secret of 3 characters; use at least 16/);
    expect(of(await secretFile('good', `${'f'.repeat(64)}\n`)).authenticated).toBe(true);
    expect(ClusterSecurity.fromConfig(Configuration.of()).authenticated).toBe(false);
  });

  it('lets through calls with the secret only, before the handler runs', async () => {
    const security = of(await secretFile('server', 'x'.repeat(32)));
    const other = of(await secretFile('other', 'y'.repeat(32)));
    const proto = loadProto();
    let handled = 0;
    const server = new grpc.Server(security.serverOptions());
    server.addService(proto.Dispatcher.service, {
      ListJobs: handleUnary(() => {
        handled++;
        return { jobs: [] };
      }, silentLogger()),
    });
    const port = await bindServer(server, '127.0.0.1', 0, security.serverCredentials());
    const client = (s: ClusterSecurity) =>
      new proto.Dispatcher(`127.0.0.1:${port}`, s.channelCredentials(), s.channelOptions());
    try {
      const good = client(security);
      expect(await unary(good, good.ListJobs, {}, 5_000)).toEqual({ jobs: [] });
      good.close();
      for (const s of [ClusterSecurity.none(), other]) {
        const bad = client(s);
        const err = await unary(bad, bad.ListJobs, {}, 5_000).then(
          () => undefined,
          (e: unknown) => fromServiceError(e),
        );
        expect(err?.code).toBe(ErrorCode.UNAUTHENTICATED);
        bad.close();
      }
      expect(handled).toBe(1);
    } finally {
      await shutdownServer(server);
    }
  });

  it('fuzz: any rebound-auth metadata but the secret is UNAUTHENTICATED, and the server lives on', async () => {
    const security = of(await secretFile('fuzz', 'z'.repeat(32)));
    const proto = loadProto();
    let handled = 0;
    const server = new grpc.Server(security.serverOptions());
    server.addService(proto.Dispatcher.service, {
      ListJobs: handleUnary(() => {
        handled++;
        return { jobs: [] };
      }, silentLogger()),
    });
    const port = await bindServer(server, '127.0.0.1', 0, security.serverCredentials());
    const client = new proto.Dispatcher(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    // Values grpc-js lets a client send as an ASCII metadata entry, repeated or not.
    const printable = fc.stringMatching(/^[\x20-\x7e]{0,64}$/);
    const secret = 'z'.repeat(32);
    // Other entries beside it: any key grpc-js sends, binary ones, and the secret itself under a
    // key that is not the auth key.
    const otherKey = fc
      .stringMatching(/^[a-z0-9_.-]{1,24}$/)
      .filter((k) => k !== AUTH_METADATA_KEY && !k.startsWith('grpc-') && !k.endsWith('-bin'));
    const other = fc.oneof(
      fc.tuple(otherKey, fc.oneof(printable, fc.constant(secret))),
      fc.tuple(
        fc.constantFrom(`${AUTH_METADATA_KEY}-bin`, 'x-bin'),
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      ),
      fc.tuple(fc.constantFrom(`${AUTH_METADATA_KEY}-bin`, `${AUTH_METADATA_KEY}-x`), fc.constant(secret)),
    );
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(printable, { maxLength: 3 }),
          fc.array(other, { maxLength: 4 }),
          async (values, extra) => {
            const metadata = new grpc.Metadata();
            for (const v of values) metadata.add(AUTH_METADATA_KEY, v);
            for (const [k, v] of extra)
              metadata.add(k, k.endsWith('-bin') && typeof v === 'string' ? Buffer.from(v) : v);
            const code = await new Promise<number>((resolve) =>
              client.ListJobs({}, metadata, { deadline: Date.now() + 5_000 }, (err) => resolve(err?.code ?? 0)),
            );
            expect(code).toBe(grpc.status.UNAUTHENTICATED);
          },
        ),
        { numRuns: 200 },
      );
      expect(handled).toBe(0);
      const good = new proto.Dispatcher(`127.0.0.1:${port}`, security.channelCredentials(), security.channelOptions());
      expect(await unary(good, good.ListJobs, {}, 5_000)).toEqual({ jobs: [] });
      good.close();
    } finally {
      client.close();
      await shutdownServer(server);
    }
  });

  it('with mutual TLS, serves only clients whose certificate the cluster CA signed', async () => {
    const certs = join(dir, 'certs');
    execFileSync('bash', [fileURLToPath(new URL('../../../scripts/make-certs.sh', import.meta.url)), certs]);
    const strangers = join(dir, 'strangers');
    execFileSync('bash', [fileURLToPath(new URL('../../../scripts/make-certs.sh', import.meta.url)), strangers]);
    const tls = (d: string) =>
      ClusterSecurity.fromConfig(
        Configuration.of({
          'security.ssl.internal.enabled': 'true',
          'security.ssl.internal.ca': join(d, 'ca.pem'),
          'security.ssl.internal.cert': join(d, 'cert.pem'),
          'security.ssl.internal.key': join(d, 'key.pem'),
        }),
      );
    const security = tls(certs);
    const proto = loadProto();
    const server = new grpc.Server(security.serverOptions());
    server.addService(proto.Dispatcher.service, { ListJobs: handleUnary(() => ({ jobs: [] }), silentLogger()) });
    const port = await bindServer(server, '127.0.0.1', 0, security.serverCredentials());
    try {
      const good = new proto.Dispatcher(`127.0.0.1:${port}`, security.channelCredentials(), security.channelOptions());
      expect(await unary(good, good.ListJobs, {}, 5_000)).toEqual({ jobs: [] });
      good.close();
      // Plain text, TLS that trusts the cluster CA but presents no client certificate, and TLS
      // with a certificate of another CA: no connection at all.
      const clients: [string, grpc.ChannelCredentials][] = [
        ['plain text', ClusterSecurity.none().channelCredentials()],
        ['no client certificate', grpc.credentials.createSsl(readFileSync(join(certs, 'ca.pem')))],
        ['a certificate of another CA', tls(strangers).channelCredentials()],
      ];
      for (const [what, credentials] of clients) {
        const bad = new proto.Dispatcher(`127.0.0.1:${port}`, credentials, security.channelOptions());
        const err = await unary(bad, bad.ListJobs, {}, 3_000).then(
          () => undefined,
          (e: unknown) => fromServiceError(e),
        );
        expect(err?.code, what).toBe(ErrorCode.UNAVAILABLE);
        bad.close();
      }
    } finally {
      await shutdownServer(server);
    }
  });
});
