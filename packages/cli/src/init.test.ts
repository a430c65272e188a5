import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '@rebound/core';
import { init } from './init.js';
import type { CliIo } from './io.js';

function capture(cwd: string): { io: CliIo; out: () => string } {
  let out = '';
  return {
    io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env: {}, cwd },
    out: () => out,
  };
}

describe('rebound init', () => {
  it('writes a project whose @rebound/api is a file: link to this installation', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'rebound-init-'));
    const c = capture(parent);
    expect(await init({ dir: 'My Job', json: false }, c.io)).toBe(0);
    const dir = join(parent, 'My Job');
    expect(c.out().split('\n')[0]).toBe(
      `created the job project my-job in ${dir}: package.json, tsconfig.json, job.ts, job.test.ts, README.md`,
    );
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
    };
    expect(pkg.name).toBe('my-job');
    expect(pkg.dependencies['@rebound/api']).toBe(`file:${realpathSync(join(import.meta.dirname, '..', '..', 'api'))}`);
    expect(readFileSync(join(dir, 'job.ts'), 'utf8')).toContain("defineJob('my-job',");
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).not.toMatch(/__\w+__/);
  });

  it('never overwrites a file, and says which ones are in the way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-init-'));
    writeFileSync(join(dir, 'job.ts'), 'mine\n');
    const err = await init({ dir, json: false }, capture(dir).io).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
    expect((err as Error).message).toBe(
      `${dir} already has job.ts; 'rebound init' writes only new files: choose another directory or remove them`,
    );
    expect(readFileSync(join(dir, 'job.ts'), 'utf8')).toBe('mine\n');
  });
});
