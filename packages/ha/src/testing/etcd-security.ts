/**
 * Throwaway TLS material and etcd users for tests of `high-availability.etcd.username`,
 * `password-file` and `tls.*`: a CA, a server certificate for the members and a client
 * certificate, made with openssl at test time (nothing is checked in), and etcd auth enabled
 * through etcdctl, as an operator would do it (docs/etcd.md).
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';

export interface EtcdTlsFiles {
  readonly caFile: string;
  /** The client certificate and key (CN rebound), for client-cert-auth. */
  readonly certFile: string;
  readonly keyFile: string;
  /** The members' certificate and key (SAN: the host the members listen on, localhost, 127.0.0.1). */
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
}

/** The etcd user a Rebound process authenticates as, and its password file (mode 0600). */
export interface EtcdTestUser {
  readonly username: string;
  readonly password: string;
  readonly passwordFile: string;
}

function openssl(args: readonly string[]): void {
  const r = spawnSync('openssl', args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.trim()}`);
}

/** Makes a CA and a server and client certificate signed by it in `dir` (keys mode 0600). */
export async function makeEtcdTlsFiles(dir: string, host: string): Promise<EtcdTlsFiles> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const f = (name: string): string => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...ec,
    '-days',
    '2',
    '-subj',
    '/CN=rebound etcd test CA',
    '-keyout',
    f('ca-key.pem'),
    '-out',
    f('ca.pem'),
  ]);
  const isIp = /^[0-9.]+$/.test(host);
  const san = [
    'DNS:localhost',
    'IP:127.0.0.1',
    ...(host === '127.0.0.1' || host === 'localhost' ? [] : [isIp ? `IP:${host}` : `DNS:${host}`]),
  ];
  const sign = async (name: string, cn: string, ext: string): Promise<void> => {
    openssl(['req', ...ec, '-subj', `/CN=${cn}`, '-keyout', f(`${name}-key.pem`), '-out', f(`${name}.csr`)]);
    await writeFile(f(`${name}.ext`), ext);
    openssl([
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca-key.pem'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      f(`${name}.ext`),
      '-out',
      f(`${name}.pem`),
    ]);
  };
  await sign('server', 'etcd', `subjectAltName=${san.join(',')}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  await sign('client', 'rebound', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: f('ca.pem'),
    certFile: f('client.pem'),
    keyFile: f('client-key.pem'),
    serverCertFile: f('server.pem'),
    serverKeyFile: f('server-key.pem'),
  };
}

/** GET <clientUrl>/health over https with the test CA (and client certificate). */
export function httpsHealthy(clientUrl: string, tls: EtcdTlsFiles, read: (path: string) => Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      `${clientUrl}/health`,
      { ca: read(tls.caFile), cert: read(tls.certFile), key: read(tls.keyFile), timeout: 2_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve(/"health":\s*"true"/.test(body)));
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function etcdctl(
  binary: string,
  endpoints: string,
  tls: EtcdTlsFiles | undefined,
  args: readonly string[],
  user?: string,
): string {
  const r = spawnSync(
    binary,
    [
      '--endpoints',
      endpoints,
      ...(tls ? ['--cacert', tls.caFile, '--cert', tls.certFile, '--key', tls.keyFile] : []),
      ...(user ? ['--user', user] : []),
      ...args,
    ],
    { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ETCDCTL_API: '3' } },
  );
  if (r.status !== 0) throw new Error(`etcdctl ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.trim()}`);
  return r.stdout;
}

/**
 * Enables etcd auth: a root user, and a user `rebound` whose role may read and write every key
 * (a real cluster would grant the prefix /<cluster-id>/ only: docs/etcd.md). Returns that user.
 */
export async function enableEtcdAuth(
  etcdctlBinary: string,
  endpoints: string,
  tls: EtcdTlsFiles | undefined,
  dir: string,
): Promise<EtcdTestUser> {
  const rootPassword = `root-${process.pid}-${Date.now()}`;
  const password = `rebound-${process.pid}-${Date.now()}`;
  const run = (args: readonly string[], user?: string): string => etcdctl(etcdctlBinary, endpoints, tls, args, user);
  run(['user', 'add', `root:${rootPassword}`]);
  run(['user', 'add', `rebound:${password}`]);
  run(['role', 'add', 'rebound']);
  run(['role', 'grant-permission', 'rebound', '--prefix=true', 'readwrite', '/']);
  run(['user', 'grant-role', 'rebound', 'rebound']);
  run(['auth', 'enable']);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const passwordFile = join(dir, 'etcd-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  return { username: 'rebound', password, passwordFile };
}
