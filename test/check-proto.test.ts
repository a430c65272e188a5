import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm run check:proto` (docs/testing.md) must leave the tree as it found it: the CLI refuses a
 * build older than its sources, so a check that rewrote the generated types, even byte for byte,
 * stopped every `rebound` command until the next build.
 */
/** `rebound --version` as a user runs it: with the check of the build against its sources on. */
function cliVersion(): { status: number | null; stderr: string } {
  const { REBOUND_DIST_CHECK: _off, ...env } = process.env;
  return spawnSync(process.execPath, [join(REPO, 'bin/rebound.js'), '--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
}

describe('npm run check:proto', () => {
  it('reports up to date, and rebound still runs afterwards', () => {
    expect(cliVersion()).toMatchObject({ status: 0, stderr: '' });

    const check = spawnSync('bash', [join(REPO, 'scripts/check-proto.sh')], { encoding: 'utf8', timeout: 120_000 });
    expect(check.stderr).toBe('');
    expect(check.stdout.trim()).toBe('proto types: up to date');
    expect(check.status).toBe(0);

    expect(cliVersion()).toMatchObject({ status: 0, stderr: '' });
  });
});
