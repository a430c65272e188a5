import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from './util.js';

/**
 * The scripts that make Docker and network namespaces usable before .ci/run starts their suites:
 * exit 1 (the suite is skipped, with the reason) only where the tools cannot be had or the kernel
 * or the process's capabilities refuse, named; exit 2 (the run fails) when the tools are there but
 * do not work. Broken tools are stubs ahead in PATH; missing capabilities come from setpriv. As
 * root only (CI runs as root): the scripts install and start things when they are.
 */
const REPO = fileURLToPath(new URL('..', import.meta.url));
const ENSURE_DOCKER = join(REPO, 'test/compose/ensure-docker.sh');
const ENSURE_NETNS = join(REPO, 'test/netns/ensure-netns.sh');
const ROOT = process.platform === 'linux' && process.getuid?.() === 0;
const SETPRIV = ROOT && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;

interface Outcome {
  readonly code: number | null;
  readonly lastError: string;
}

function runScript(command: readonly string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, lastError: err.trimEnd().split('\n').at(-1) ?? '' }));
  });
}

describe.skipIf(!ROOT)('CI tool checks: skip only what cannot run here, fail what is broken', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('rebound-ci-ensure-');
    await chmod(dir, 0o755); // the stubs run as another user too
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A directory of executable stubs, to put ahead of PATH. */
  async function stubs(name: string, scripts: Record<string, string>): Promise<NodeJS.ProcessEnv> {
    const bin = join(dir, name);
    await mkdir(bin, { recursive: true, mode: 0o755 });
    for (const [tool, body] of Object.entries(scripts)) {
      await writeFile(join(bin, tool), `#!/bin/sh\n${body}\n`);
      await chmod(join(bin, tool), 0o755);
    }
    return { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
  }

  /** Docker installed, no engine answering, and a dockerd that exits at once. */
  const brokenDocker = async (): Promise<NodeJS.ProcessEnv> => ({
    ...(await stubs('docker-broken', {
      docker: 'echo "Cannot connect to the Docker daemon" >&2; exit 1',
      dockerd: 'echo "failed to start daemon: stub refuses"; exit 1',
      'docker-compose': 'exit 0',
    })),
    REBOUND_ETCD_BINARY: '/bin/true',
    REBOUND_DOCKERD_LOG: join(dir, 'dockerd.log'),
  });

  it('fails (exit 2) when Docker is installed but dockerd exits', async () => {
    const run = await runScript(['bash', ENSURE_DOCKER], await brokenDocker());
    expect(run).toEqual({
      code: 2,
      lastError:
        'ensure-docker: Docker is installed but does not work: dockerd exited: failed to start daemon: stub refuses',
    });
  });

  it.skipIf(!SETPRIV)('skips (exit 1) where no namespace can be made, naming it, before starting dockerd', async () => {
    const env = await brokenDocker();
    const run = await runScript(
      ['setpriv', '--bounding-set=-sys_admin', '--inh-caps=-sys_admin', 'bash', ENSURE_DOCKER],
      env,
    );
    expect(run.code).toBe(1);
    expect(run.lastError).toMatch(
      /^ensure-docker: Docker cannot run here: no new namespaces here, which containers need \(.*Operation not permitted\)$/,
    );
  });

  it.skipIf(!SETPRIV)('skips (exit 1) a user who cannot start dockerd', async () => {
    const run = await runScript(
      ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'bash', ENSURE_DOCKER],
      await brokenDocker(),
    );
    expect(run).toEqual({
      code: 1,
      lastError: 'ensure-docker: Docker cannot run here: no Docker engine answers and not root to start dockerd',
    });
  });

  it.skipIf(!SETPRIV)('netns: skips (exit 1) without CAP_SYS_ADMIN, naming it', async () => {
    const run = await runScript(
      ['setpriv', '--bounding-set=-sys_admin', '--inh-caps=-sys_admin', 'bash', ENSURE_NETNS],
      process.env,
    );
    expect(run).toEqual({
      code: 1,
      lastError: 'ensure-netns: the netns tests cannot run here: no CAP_SYS_ADMIN (an unprivileged container?)',
    });
  });

  it('netns: fails (exit 2) when ip is there and allowed but cannot add a namespace', async () => {
    const env = await stubs('ip-broken', {
      ip: 'echo "Cannot create namespace file \\"/run/netns/x\\": Input/output error" >&2; exit 1',
      nft: 'exit 0',
      nsenter: 'exit 0',
      etcd: 'exit 0',
      etcdctl: 'exit 0',
    });
    const run = await runScript(['bash', ENSURE_NETNS], env);
    expect(run).toEqual({
      code: 2,
      lastError:
        'ensure-netns: the netns tools are installed but do not work: ip netns add fails: Cannot create namespace file "/run/netns/x": Input/output error',
    });
  });

  it('netns: skips (exit 1) a kernel without nf_tables, naming it', async () => {
    const env = await stubs('nft-unsupported', {
      // `ip netns add/del` succeed; `ip netns exec <ns> nft ...` runs the nft below.
      ip: 'if [ "$1 $2" = "netns exec" ]; then shift 3; exec "$@"; fi; exit 0',
      nft: 'echo "Error: Could not process rule: Operation not supported" >&2; exit 1',
      nsenter: 'exit 0',
      etcd: 'exit 0',
      etcdctl: 'exit 0',
    });
    const run = await runScript(['bash', ENSURE_NETNS], env);
    expect(run).toEqual({
      code: 1,
      lastError:
        'ensure-netns: the netns tests cannot run here: the kernel has no nf_tables: Error: Could not process rule: Operation not supported',
    });
  });
});
