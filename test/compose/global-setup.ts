/**
 * Builds the image once for every compose end-to-end file (file HA and etcd HA run the same
 * image): `compose build` of docker-compose.yml, whose jobmaster-1 is the only service that builds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGE, ROOT, baseImage, composeCommand, lastLine, log, run, since } from './docker.js';

export default async function setup(): Promise<void> {
  const composeCmd = await composeCommand();
  const base = await baseImage();
  // The compose file names a bind source for /data; the build does not use it.
  const data = mkdtempSync(join(tmpdir(), 'rebound-compose-build-'));
  try {
    const env = {
      ...process.env,
      REBOUND_DATA: data,
      REBOUND_BASE_IMAGE: base,
      REBOUND_IMAGE: IMAGE,
      REBOUND_NODE_MODULES: 'context',
    };
    const t0 = Date.now();
    const build = await run(
      composeCmd[0]!,
      [...composeCmd.slice(1), '-f', join(ROOT, 'docker-compose.yml'), 'build'],
      env,
      15 * 60_000,
    );
    if (build.code !== 0) throw new Error(`build failed: ${lastLine(build.stderr)}`);
    log(`${composeCmd.join(' ')}: image ${IMAGE} built on ${base} in ${since(t0)}`);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}
