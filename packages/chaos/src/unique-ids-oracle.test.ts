import { describe, expect, it } from 'vitest';
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
});
