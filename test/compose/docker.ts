/**
 * What the compose end-to-end files and their global setup share: running commands, the compose
 * command of this machine, the base image ensure-docker.sh made available, the image tag.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
/**
 * Its own tag, so the tests never replace a `rebound:latest` someone built by hand;
 * REBOUND_E2E_IMAGE gives each checkout its own where several share one Docker engine.
 */
export const IMAGE = process.env.REBOUND_E2E_IMAGE ?? 'rebound:e2e';

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((done, fail) => {
    execFile(cmd, args, { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
      if (e?.killed) fail(new Error(`${cmd} ${args.join(' ')} did not end within ${timeoutMs / 1000} s\n${stderr}`));
      else if (e && typeof e.code !== 'number') fail(e);
      else done({ code: typeof e?.code === 'number' ? e.code : 0, stdout, stderr });
    });
  });
}

export function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

export const since = (t0: number): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
export const log = (line: string): void => void process.stdout.write(`[compose e2e] ${line}\n`);

/** `docker compose` (v2) where it exists, else `docker-compose` (v1, 1.29 or later): the files suit both. */
export async function composeCommand(): Promise<string[]> {
  const v2 = await run('docker', ['compose', 'version'], process.env, 30_000).catch(() => undefined);
  return v2?.code === 0 ? ['docker', 'compose'] : ['docker-compose'];
}

/** The base image ensure-docker.sh made available, chosen the same way. */
export async function baseImage(): Promise<string> {
  const candidates = process.env.REBOUND_BASE_IMAGE
    ? [process.env.REBOUND_BASE_IMAGE]
    : ['node:20-bookworm-slim', 'rebound-node-base:trixie'];
  for (const image of candidates) {
    if ((await run('docker', ['image', 'inspect', image], process.env, 30_000)).code === 0) return image;
  }
  throw new Error(
    `base image missing: none of ${candidates.join(', ')} is present; run test/compose/ensure-docker.sh (as root)`,
  );
}
