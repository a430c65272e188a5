import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Configuration, silentLogger, systemClock } from '@rebound/core';
import { FileHaServices } from '@rebound/ha';
import { httpStatus, rawHttpStatus } from '@rebound/core/testing/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRestServer, type RestServer } from './rest-server.js';

const SECRET = 'rest-test-secret-0123456789abcdef';

describe('REST server before authentication', () => {
  let dir: string;
  let haDir: string;
  let server: RestServer;
  const auth = { authorization: `Bearer ${SECRET}` };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-rest-'));
    haDir = join(dir, 'ha');
    await mkdir(join(haDir, 'endpoints'), { recursive: true });
    const tokenFile = join(dir, 'secret');
    await writeFile(tokenFile, SECRET, { mode: 0o600 });
    const config = Configuration.of({
      'security.auth.token-file': tokenFile,
      'rest.bind-address': '127.0.0.1',
      'rest.port': '0',
    });
    server = await startRestServer({
      id: 'jm-test',
      ha: new FileHaServices(haDir, haDir, config),
      config,
      logger: silentLogger(),
      clock: systemClock,
      leader: () => undefined,
    });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers malformed cookies, bearer headers and ?token= with 401', async () => {
    for (const cookie of ['rebound_token=%', 'rebound_token=%E0%A4%A', 'rebound_session=%', '=;;=%'])
      expect(await httpStatus(`${server.url}/cluster`, { headers: { cookie } }), cookie).toBe(401);
    expect(await httpStatus(`${server.url}/cluster?token=%`)).toBe(401);
    expect(await httpStatus(`${server.url}/cluster`, { headers: { authorization: 'Bearer %' } })).toBe(401);
    expect(await httpStatus(`${server.url}/cluster`, { headers: auth })).toBe(200);
  });

  it('fuzz: cookie, authorization, origin, target and method give 4xx without the secret, never 500', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc
        .array(
          fc.constantFrom('%', '%E0', '%ff', '=', ';', ' ', 'rebound_token', 'rebound_session', 'Bearer ', 'http://'),
        )
        .map((p) => p.join('')),
    );
    const target = fc.oneof(
      fc.webPath(),
      fc
        .array(fc.constantFrom('/jobs', '/stream', '/v1', '?', 'token=', 'job=', '%', '&', '#', '%zz', '..', '/'))
        .map((p) => p.join('')),
    );
    await fc.assert(
      fc.asyncProperty(
        value,
        value,
        value,
        target,
        fc.constantFrom('GET', 'PATCH', 'POST', 'OPTIONS', 'DELETE'),
        async (cookie, authorization, origin, path, method) => {
          const got = await httpStatus(`${server.url}/${path.replace(/^\/+/, '')}`, {
            method,
            headers: { cookie, authorization, origin },
          });
          if (got !== undefined) expect([204, 400, 401, 403, 404, 421]).toContain(got);
        },
      ),
      { numRuns: 300 },
    );
    expect(await httpStatus(`${server.url}/cluster`, { headers: auth })).toBe(200);
  });

  it('content-length and body limits: 4xx, never 500, and the server still serves', async () => {
    const port = server.port;
    const head = (extra: string, method = 'PATCH'): string =>
      `${method} /jobs/00000000000000000000000000000000 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`;
    const cases = [
      head('Content-Length: abc\r\n'),
      head('Content-Length: -1\r\n'),
      head('Content-Length: 99999999999999999999\r\n'),
      head('Content-Length: 1\r\nContent-Length: 2\r\n'),
      head('Transfer-Encoding: chunked\r\nContent-Length: 3\r\n'),
      head(`Content-Length: ${(1 << 20) + 1}\r\n`),
      head(`Cookie: ${'a'.repeat(100_000)}\r\n`, 'GET'),
    ];
    for (const request of cases) {
      const got = await rawHttpStatus(port, request);
      expect(got === 0 || (got >= 400 && got < 500), `${got} for ${JSON.stringify(request.slice(0, 90))}`).toBe(true);
    }
    const withSecret = `Authorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\n`;
    const big = `${head(`${withSecret}Content-Length: ${(1 << 20) + 10}\r\n`)}${'x'.repeat((1 << 20) + 10)}`;
    expect(await rawHttpStatus(port, big)).toBe(413);
    expect(await httpStatus(`${server.url}/cluster`, { headers: auth })).toBe(200);
  });

  it('skips endpoint records whose URLs are not http(s)://host:port: no link, no origin, no 500', async () => {
    const record = (id: string, restUrl: string) =>
      writeFile(
        join(haDir, 'endpoints', `${id}.json`),
        JSON.stringify({ id, role: 'jobmaster', restUrl, address: '127.0.0.1:1', pid: 0, host: '', startedAtMs: 1 }),
      );
    await record('jm-script', 'javascript:alert(document.cookie)//:1');
    await record('jm-malformed', 'http://[not-a-host');
    await record('jm-path', 'http://127.0.0.1:9/evil?x=1');
    await record('jm-good', 'http://127.0.0.1:9');
    // The server reads the records again at most once a second.
    let res: Response;
    const deadline = Date.now() + 10_000;
    for (;;) {
      res = await fetch(`${server.url}/cluster`, {
        headers: { ...auth, origin: 'http://127.0.0.1:9' },
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status !== 403 || Date.now() > deadline) break;
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:9');
    const doc = (await res.json()) as { jobmasters: { id: string; restUrl: string | null }[] };
    expect(doc.jobmasters.map((j) => j.id)).toEqual(['jm-good']);
    for (const origin of ['javascript:alert(document.cookie)//:1', 'null', 'http://[not-a-host']) {
      const r = await fetch(`${server.url}/cluster`, {
        headers: { ...auth, origin },
        signal: AbortSignal.timeout(10_000),
      });
      expect(r.status, origin).toBe(403);
      expect(r.headers.get('access-control-allow-origin'), origin).toBeNull();
      await r.body?.cancel();
    }
  });

  it('refuses a Host that is not this server (DNS rebinding) with 421, serves IPs and localhost', async () => {
    const get = (host: string) =>
      rawHttpStatus(
        server.port,
        `GET /cluster HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${SECRET}\r\nConnection: close\r\n\r\n`,
      );
    for (const host of ['rebind.attacker.example', `rebind.attacker.example:${server.port}`, '%', 'a b'])
      expect([400, 421], host).toContain(await get(host));
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`])
      expect(await get(host), host).toBe(200);
  });
});
