/** Differences of two sorted line lists, as multisets (a duplicated line shows), at most `max`. */
export function diffSortedLines(expected: readonly string[], actual: readonly string[], max = 5): string[] {
  const missing: string[] = [];
  const unexpected: string[] = [];
  let i = 0;
  let j = 0;
  while (i < expected.length || j < actual.length) {
    if (j >= actual.length || (i < expected.length && expected[i]! < actual[j]!)) missing.push(expected[i++]!);
    else if (i >= expected.length || actual[j]! < expected[i]!) unexpected.push(actual[j++]!);
    else {
      i++;
      j++;
    }
  }
  const out: string[] = [];
  if (missing.length > 0)
    out.push(
      `wrong output: ${missing.length} expected line(s) missing, e.g. ${missing
        .slice(0, max)
        .map((l) => JSON.stringify(l))
        .join(', ')}`,
    );
  if (unexpected.length > 0)
    out.push(
      `wrong output: ${unexpected.length} unexpected line(s), e.g. ${unexpected
        .slice(0, max)
        .map((l) => JSON.stringify(l))
        .join(', ')}`,
    );
  return out;
}
