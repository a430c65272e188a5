import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `word<TAB>count` lines of files, in a map; a word twice is an error. */
export function readCounts(paths: readonly string[]): Map<string, string> {
  const counts = new Map<string, string>();
  for (const p of paths) {
    for (const line of readFileSync(p, 'utf8').split('\n')) {
      if (line === '') continue;
      const tab = line.lastIndexOf('\t');
      const word = line.slice(0, tab);
      if (counts.has(word)) throw new Error(`word '${word}' appears twice in the output of ${p}`);
      counts.set(word, line.slice(tab + 1));
    }
  }
  return counts;
}

export interface Verification {
  readonly identical: boolean;
  readonly detail: string;
}

export function verify(baselineFile: string, clusterDir: string): Verification {
  const expected = readCounts([baselineFile]);
  const parts = readdirSync(clusterDir)
    .filter((n) => n.startsWith('part-'))
    .map((n) => join(clusterDir, n));
  const actual = readCounts(parts);
  const problems: string[] = [];
  for (const [w, c] of expected) {
    const got = actual.get(w);
    if (got !== c) problems.push(`${JSON.stringify(w)}: expected ${c}, cluster ${got ?? 'missing'}`);
  }
  for (const w of actual.keys())
    if (!expected.has(w)) problems.push(`${JSON.stringify(w)}: only in the cluster output`);
  return {
    identical: problems.length === 0,
    detail:
      problems.length === 0
        ? `${expected.size} words, ${parts.length} part files`
        : `${problems.length} differences, e.g. ${problems.slice(0, 5).join('; ')}`,
  };
}
