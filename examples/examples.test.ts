import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';

const examples = import.meta.dirname;

async function run(example: string, args: string[]): Promise<string[]> {
  const built = await buildJob(await loadJobModule(join(examples, example)), args);
  const out = await runLocally(built);
  expect([...out.keys()]).toEqual(['/out']);
  return out.get('/out')!.sort();
}

describe('examples (on the reference interpreter)', () => {
  it('wordcount counts lower-cased runs of letters and digits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-wc-'));
    writeFileSync(join(dir, 'a.txt'), 'Hello, hello WORLD!\nÜber 42 über-alles\n');
    writeFileSync(join(dir, 'b.txt'), '日本語 テキスト 42\n\n');
    writeFileSync(join(dir, '_ignored'), 'hello\n');
    expect(await run('wordcount.ts', ['--input', dir, '--output', '/out'])).toEqual(
      ['42\t2', 'alles\t1', 'hello\t2', 'world\t1', 'テキスト\t1', 'über\t2', '日本語\t1'].sort(),
    );
  });

  it('unique-ids numbers every line once with ids from its coordinator', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-ids-'));
    writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n\ngamma\n');
    const out = await run('unique-ids.ts', ['--input', dir, '--output', '/out', '--block-size', '3']);
    expect(out).toEqual(['0\talpha', '1\tbeta', '2\t', '3\tgamma'].sort());
  });

  it('wordcount reports bad arguments as a build failure', async () => {
    const def = await loadJobModule(join(examples, 'wordcount.ts'));
    await expect(buildJob(def, ['--input', 'x'])).rejects.toThrow(
      /job 'wordcount' failed to build: missing --output; usage: wordcount/,
    );
    await expect(buildJob(def, ['--bogus'])).rejects.toThrow(/Unknown option '--bogus'/);
  });
});
