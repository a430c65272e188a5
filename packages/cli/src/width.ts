/**
 * Terminal column arithmetic for the live view: how many columns a string takes (ANSI colours
 * take none, East Asian wide characters and emoji take two, combining marks none) and how to cut
 * or wrap it to a width. log-update redraws in place by counting lines; a line wider than the
 * terminal would wrap and break that count, so every line is fitted here first.
 *
 * Own code rather than string-width/slice-ansi: those are only transitive dependencies of
 * log-update here, and importing an undeclared package breaks the dependency boundary check.
 */

// eslint-disable-next-line no-control-regex
const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const ANSI_AT_START = /^\x1b\[[0-9;?]*[A-Za-z]/;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** East Asian Wide (W) and Fullwidth (F) ranges of Unicode 15, the blocks that matter in practice. */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f3],
  [0x26f5, 0x26f5],
  [0x26fa, 0x26fa],
  [0x26fd, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x17000, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251],
  [0x1f300, 0x1f64f],
  [0x1f680, 0x1f6ff],
  [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];

function isWide(cp: number): boolean {
  let lo = 0;
  let hi = WIDE_RANGES.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = WIDE_RANGES[mid]!;
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return true;
  }
  return false;
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}]+$/u;

/** Columns one grapheme cluster takes. */
function graphemeWidth(g: string): number {
  if (ZERO_WIDTH.test(g)) return 0;
  const cp = g.codePointAt(0) ?? 0;
  // An emoji presentation selector (U+FE0F) makes a narrow pictograph wide.
  if (g.includes('\ufe0f') && /\p{Extended_Pictographic}/u.test(g)) return 2;
  return isWide(cp) ? 2 : 1;
}

export function stripAnsi(s: string): string {
  return s.replace(ANSI_RE, '');
}

/** Columns `s` takes on a terminal (ANSI escape sequences take none). */
export function displayWidth(s: string): number {
  let w = 0;
  for (const { segment } of segmenter.segment(stripAnsi(s))) w += graphemeWidth(segment);
  return w;
}

/**
 * Cuts `s` to at most `width` columns, ending with `…` when cut. Colour sequences are kept (a
 * reset is appended when something was cut, so a cut colour does not bleed into the next line).
 */
export function truncateToWidth(s: string, width: number): string {
  if (width <= 0) return '';
  if (displayWidth(s) <= width) return s;
  let out = '';
  let used = 0;
  let rest = s;
  let sawAnsi = false;
  while (rest.length > 0) {
    const esc = ANSI_AT_START.exec(rest);
    if (esc) {
      out += esc[0];
      sawAnsi = true;
      rest = rest.slice(esc[0].length);
      continue;
    }
    const next = rest.search(ANSI_RE);
    const plain = next < 0 ? rest : rest.slice(0, next);
    let stop = false;
    for (const { segment } of segmenter.segment(plain)) {
      const w = graphemeWidth(segment);
      if (used + w > width - 1) {
        stop = true;
        break;
      }
      out += segment;
      used += w;
    }
    if (stop) break;
    rest = next < 0 ? '' : rest.slice(next);
  }
  return `${out}…${sawAnsi ? '\x1b[0m' : ''}`;
}

/** Pads `s` with spaces to `width` columns (never cuts). */
export function padToWidth(s: string, width: number): string {
  const w = displayWidth(s);
  return w >= width ? s : s + ' '.repeat(width - w);
}

/**
 * Word-wraps plain text to `width` columns; continuation lines start with `indent`. A word longer
 * than a line is cut. Used for the sentences of the live view, which should be read, not cut.
 */
export function wrapToWidth(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  const limit = (): number => width - (lines.length === 0 ? 0 : displayWidth(indent));
  // A number keeps its unit ("167 ms", "2.6 KiB", "1.1 s ago") and an arrow its target on one line.
  for (const word of text.split(/ +(?!(?:ms|s|min|B|KiB|MiB|GiB|TiB|ago)\b)(?<!→ )/)) {
    if (word === '') continue;
    const candidate = line === '' ? word : `${line} ${word}`;
    if (displayWidth(candidate) <= limit()) {
      line = candidate;
      continue;
    }
    if (line !== '') lines.push(line);
    line = displayWidth(word) <= limit() ? word : truncateToWidth(word, limit());
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${indent}${l}`)).map((l) => truncateToWidth(l, width));
}
