import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeClusterFile } from './cluster-file.js';
import { config, withUnit } from './info.js';
import type { CliIo } from './io.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function capture(cwd: string): { io: CliIo; out: () => string } {
  let out = '';
  return {
    io: { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true }, env: {}, cwd },
    out: () => out,
  };
}

describe('rebound config', () => {
  it('shows durations and sizes with their unit', async () => {
    const c = capture('/');
    await config({ json: false }, c.io);
    expect(c.out()).toMatch(/execution\.batch\.job-recovery\.previous-worker\.recovery\.timeout\s+30 s\s/);
    expect(c.out()).toMatch(/job-event\.store\.write-buffer\.size\s+1 mb\s/);
    expect(withUnit('duration', '30000')).toBe('30000 ms');
    expect(withUnit('memory', '1024')).toBe('1024 bytes');
    expect(withUnit('int', '4')).toBe('4');
  });

  it('--cluster shows the values in force on a local cluster and who set them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rebound-config-'));
    dirs.push(dir);
    await writeClusterFile(dir, {
      haDir: 'ha',
      processes: [],
      slots: 2,
      config: { 'heartbeat.timeout': '2 s', 'execution.batch.job-recovery.enabled': 'true', 'rpc.timeout': '3000' },
    });
    const c = capture(dir);
    await config({ json: false, cluster: '.' }, c.io);
    expect(c.out()).toMatch(/heartbeat\.timeout\s+2 s\s+cluster \(default 50 s\)/);
    expect(c.out()).toMatch(/rpc\.timeout\s+3000 ms\s+cluster/);
    expect(c.out()).toMatch(/heartbeat\.interval\s+10 s\s+default/);
    const j = capture(dir);
    await config({ json: true, cluster: '.' }, j.io);
    const parsed = JSON.parse(j.out()) as { config: { key: string; value: string; source: string }[] };
    expect(parsed.config.find((r) => r.key === 'execution.batch.job-recovery.enabled')).toEqual({
      key: 'execution.batch.job-recovery.enabled',
      value: 'true',
      source: 'cluster',
      default: 'false',
    });
  });
});
