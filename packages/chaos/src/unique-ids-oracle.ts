import { diffSortedLines } from './line-diff.js';

// Written from what examples/unique-ids.ts promises, sharing no code with it: an id is correct if
// no other line has it, whatever block it came from, so the oracle needs nothing of the
// coordinator (gaps are allowed: a failed attempt's blocks are never handed out again).

/** Canonical decimal, as the job prints `${id}`: "07" next to "7" would be the same id twice. */
const ID = /^(0|[1-9][0-9]*)$/;

/**
 * Checks the `id<TAB>line` output of the unique-ids job against its sorted input lines: every
 * input line exactly once (a multiset: repeated input lines must come out as often), every id a
 * non-negative safe integer, no id on two lines. At most `max` examples of each problem.
 */
export function checkNumberedLines(expected: readonly string[], actual: readonly string[], max = 5): string[] {
  const problems: string[] = [];
  const badIds: string[] = [];
  const linesById = new Map<number, string[]>();
  const lines: string[] = [];
  for (const numbered of actual) {
    const tab = numbered.indexOf('\t');
    const id = tab < 0 ? '' : numbered.slice(0, tab);
    // Parsed only when canonical: Number() also takes ' 7', '0x7' and '1e3'.
    if (!ID.test(id) || !Number.isSafeInteger(Number(id))) {
      badIds.push(numbered);
      continue;
    }
    lines.push(numbered.slice(tab + 1));
    const same = linesById.get(Number(id));
    if (same) same.push(numbered);
    else linesById.set(Number(id), [numbered]);
  }
  const quote = (ls: readonly string[]): string => ls.map((l) => JSON.stringify(l)).join(', ');
  if (badIds.length > 0)
    problems.push(
      `wrong output: ${badIds.length} line(s) without a non-negative integer id and a tab, e.g. ${quote(badIds.slice(0, max))}`,
    );
  const twice = [...linesById.entries()].filter(([, ls]) => ls.length > 1).sort(([a], [b]) => a - b);
  if (twice.length > 0)
    problems.push(
      `wrong output: ${twice.length} id(s) given to more than one line, e.g. ${twice
        .slice(0, max)
        .map(([id, ls]) => `${id} (${quote(ls)})`)
        .join(', ')}`,
    );
  problems.push(...diffSortedLines(expected, lines.sort(), max));
  return problems;
}
