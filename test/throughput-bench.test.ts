/**
 * The throughput benchmark's correctness, not its figures (benchmarks are not timed tests): one
 * round on a tiny large-vocabulary corpus must give exactly the plain-process baseline's output
 * and write both result files. The judged run is `npx tsx bench/throughput/run.ts` (see
 * bench/results/throughput.md).
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from './util.js';

const RUN = join(import.meta.dirname, '../bench/throughput/run.ts');

function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe('bench/throughput (correctness only)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('rebound-it-throughput-');
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('one round on a 1 MB Zipf corpus: the cluster output equals the single process output, results written', async () => {
    const results = join(dir, 'throughput.json');
    const r = await run([
      '--mb',
      '1',
      '--corpora',
      'large',
      '--rounds',
      '1',
      '--no-profile',
      '--workdir',
      join(dir, 'work'),
      '--results',
      results,
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const doc = JSON.parse(await readFile(results, 'utf8')) as {
      outputsIdentical: boolean;
      corpora: {
        name: string;
        rounds: { outputsIdentical: boolean; cluster: { restarts: number } }[];
        input: { distinctWords: number };
      }[];
    };
    expect(doc.outputsIdentical).toBe(true);
    expect(doc.corpora.map((c) => c.name)).toEqual(['large']);
    expect(doc.corpora[0]!.rounds).toHaveLength(1);
    expect(doc.corpora[0]!.input.distinctWords).toBeGreaterThan(1000);
    expect(await readFile(join(dir, 'throughput.md'), 'utf8')).toMatch(/Median ratio/);
  });
});
