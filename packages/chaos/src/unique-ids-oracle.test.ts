import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { REPO_ROOT } from './cluster.js';
import {
  JOB_MODULES,
  checkOutput,
  drawJobParams,
  expectedLines,
  jobArgs,
  outputOracle,
  writeJobInput,
} from './jobs.js';
import { Prng } from './prng.js';
import { checkNumberedLines } from './unique-ids-oracle.js';

const sorted = (lines: readonly string[]): string[] => [...lines].sort();
// Repeated input lines and a tab inside a line: the id ends at the first tab.
const INPUT = sorted(['the', 'the', 'job\tmaster', 'café']);

describe('the unique-ids oracle', () => {
  it('accepts every line once with distinct ids, in any order and with gaps', () => {
    expect(checkNumberedLines(INPUT, sorted(['7\tthe', '0\tthe', '12\tjob\tmaster', '3\tcafé']))).toEqual([]);
    expect(checkNumberedLines([], [])).toEqual([]);
  });

  it('rejects an id given twice, naming the id and its lines', () => {
    expect(checkNumberedLines(INPUT, sorted(['7\tthe', '0\tthe', '12\tjob\tmaster', '7\tcafé']))).toEqual([
      'wrong output: 1 id(s) given to more than one line, e.g. 7 ("7\\tcafé", "7\\tthe")',
    ]);
  });

  it('rejects a missing line and a line twice', () => {
    expect(checkNumberedLines(INPUT, sorted(['7\tthe', '12\tjob\tmaster', '3\tcafé']))).toEqual([
      'wrong output: 1 expected line(s) missing, e.g. "the"',
    ]);
    expect(checkNumberedLines(INPUT, sorted(['7\tthe', '0\tthe', '1\tthe', '12\tjob\tmaster', '3\tcafé']))).toEqual([
      'wrong output: 1 unexpected line(s), e.g. "the"',
    ]);
  });

  it('rejects ids that are not non-negative safe integers in plain decimal', () => {
    for (const bad of ['-1\tcafé', '1.5\tcafé', '07\tcafé', ' 3\tcafé', '0x3\tcafé', '9007199254740993\tcafé', 'café'])
      expect(checkNumberedLines(INPUT, sorted(['7\tthe', '0\tthe', '12\tjob\tmaster', bad]))).toEqual([
        `wrong output: 1 line(s) without a non-negative integer id and a tab, e.g. ${JSON.stringify(bad)}`,
        'wrong output: 1 expected line(s) missing, e.g. "café"',
      ]);
  });

  it("accepts the example job's own output over a drawn input, and judges unique-ids output files by it", async () => {
    const drawn = drawJobParams(new Prng(3), 'unique-ids');
    if (drawn.job !== 'unique-ids') throw new Error('unexpected job');
    const p = { ...drawn, lineDelayMs: 0 };
    const dir = await mkdtemp(join(tmpdir(), 'chaos-ids-'));
    try {
      await writeJobInput(p, join(dir, 'input'));
      const def = await loadJobModule(join(REPO_ROOT, JOB_MODULES['unique-ids']));
      const out = await runLocally(await buildJob(def, jobArgs(p, join(dir, 'input'), '/out')));
      const lines = out.get('/out')!;
      const expected = expectedLines(p);
      expect(lines).toHaveLength(expected.length);
      expect(checkNumberedLines(expected, sorted(lines))).toEqual([]);

      const output = join(dir, 'output');
      await mkdir(output);
      await writeFile(join(output, '_SUCCESS'), '');
      await writeFile(join(output, 'part-00000'), lines.join('\n') + '\n');
      expect((await checkOutput(output, expected, 1, outputOracle(p))).problems).toEqual([]);
      // The second line numbered with the first one's id: every line still there once.
      const id = (line: string): string => line.slice(0, line.indexOf('\t'));
      const reused = [lines[0]!, `${id(lines[0]!)}${lines[1]!.slice(id(lines[1]!).length)}`, ...lines.slice(2)];
      await writeFile(join(output, 'part-00000'), reused.join('\n') + '\n');
      expect((await checkOutput(output, expected, 1, outputOracle(p))).problems).toEqual([
        `wrong output: 1 id(s) given to more than one line, e.g. ${id(lines[0]!)} (${JSON.stringify(lines[0]!)}, ${JSON.stringify(reused[1]!)})`,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
