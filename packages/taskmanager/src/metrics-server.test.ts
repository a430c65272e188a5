import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Configuration, silentLogger } from '@rebound/core';
import { Registry } from 'prom-client';
import { httpStatus, rawHttpStatus } from '@rebound/core/testing/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';

const SECRET = 'metrics-test-secret-0123456789abcdef';

const status = (url: string, headers: Record<string, string>) => httpStatus(url, { headers });

describe('TaskManager metrics server before authentication', () => {
  let dir: string;
  let server: MetricsServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-metrics-'));
    const tokenFile = join(dir, 'secret');
    await writeFile(tokenFile, SECRET, { mode: 0o600 });
    const config = Configuration.of({
      'security.auth.token-file': tokenFile,
      'taskmanager.bind-host': '127.0.0.1',
      'metrics.port': '0',
    });
    server = await startMetricsServer(new Registry(), config, silentLogger());
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers a malformed cookie with 401, and serves the secret afterwards', async () => {
    for (const cookie of ['rebound_token=%', 'rebound_token=%E0%A4%A', 'rebound_token=%ff;rebound_token=%'])
      expect(await status(`${server.url}/metrics`, { cookie }), cookie).toBe(401);
    expect(await status(`${server.url}/metrics?token=%`, {})).toBe(401);
    expect(await status(`${server.url}/metrics`, { authorization: `Bearer ${SECRET}` })).toBe(200);
  });

  it('fuzz: any cookie, authorization and target is 401 (or 400/404), never 500 or a dead server', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc
        .array(fc.constantFrom('%', '%E0', '%A4%A', '%ff', '=', ';', ' ', 'rebound_token', 'Bearer ', SECRET))
        .map((p) => p.join('')),
    );
    const target = fc.oneof(
      fc.webPath(),
      fc
        .array(fc.constantFrom('/metrics', '?', 'token=', '%', '&', '#', '%zz', SECRET.slice(0, 4)))
        .map((p) => p.join('')),
    );
    await fc.assert(
      fc.asyncProperty(value, value, target, async (cookie, authorization, path) => {
        const got = await status(`${server.url}/${path.replace(/^\/+/, '')}`, { cookie, authorization });
        if (got !== undefined) expect([200, 400, 401, 404]).toContain(got);
      }),
      { numRuns: 300 },
    );
    expect(await status(`${server.url}/metrics`, { authorization: `Bearer ${SECRET}` })).toBe(200);
  });

  it('raw requests: bad content-length, bodies, huge or malformed headers are 4xx or closed, never 500', async () => {
    const port = Number(new URL(server.url).port);
    const head = (extra: string, method = 'GET', target = '/metrics'): string =>
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;
    const cases = [
      head('Cookie: rebound_token=%\r\n'),
      head('Cookie: rebound_token=%E0%A4%A\r\nAuthorization: Bearer %\r\n'),
      head('Content-Length: abc\r\n', 'POST'),
      head('Content-Length: -1\r\n', 'POST'),
      head('Content-Length: 99999999999999999999\r\n', 'POST'),
      head('Content-Length: 1\r\nContent-Length: 2\r\n', 'POST'),
      head('Transfer-Encoding: chunked\r\nContent-Length: 3\r\n', 'POST'),
      `${head(`Content-Length: ${1 << 20}\r\n`, 'POST')}${'x'.repeat(1 << 20)}`,
      head(`Cookie: ${'a'.repeat(100_000)}\r\n`),
      head('', 'GET', '/metrics?token=%&token=%zz#%'),
      'GARBAGE\r\n\r\n',
    ];
    for (const request of cases) {
      const got = await rawHttpStatus(port, request, 'latin1');
      expect(got === 0 || (got >= 400 && got < 500), `${got} for ${JSON.stringify(request.slice(0, 90))}`).toBe(true);
    }
    // Any bytes in a header value or the target (CR and LF included): the same.
    const bytes = fc.string({ unit: 'binary-ascii', maxLength: 120 });
    await fc.assert(
      fc.asyncProperty(bytes, bytes, bytes, async (cookie, authorization, target) => {
        const request = head(`Cookie: ${cookie}\r\nAuthorization: ${authorization}\r\n`, 'GET', `/${target}`);
        const got = await rawHttpStatus(port, request, 'latin1');
        expect(got === 0 || (got >= 400 && got < 500), `${got} for ${JSON.stringify(request)}`).toBe(true);
      }),
      { numRuns: 200 },
    );
    expect(await status(`${server.url}/metrics`, { authorization: `Bearer ${SECRET}` })).toBe(200);
  });
});
