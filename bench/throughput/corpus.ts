/**
 * Deterministic text corpus for the throughput benchmark: many files of lines drawn from a Zipf
 * vocabulary, so the word-frequency shape (a few very common words, a long tail of rare ones) is
 * what a wordcount meets on real text. Every file is a pure function of (seed, file index), so a
 * rerun with the same parameters reuses the files on disk.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { random32 } from '@rebound/example-support';

/** Bumped whenever the generated text changes, so stale cached inputs are regenerated. */
const GENERATOR_VERSION = 2;
/** Underscore prefix: the TextFileSource (and the baseline) skip it. */
const MANIFEST = '_corpus.json';

export interface CorpusSpec {
  readonly dir: string;
  readonly totalBytes: number;
  readonly files: number;
  readonly seed: number;
  readonly vocabulary: number;
  /** Zipf exponent: the word of rank r has weight 1 / r^s. */
  readonly zipfExponent: number;
}

export interface Corpus {
  readonly dir: string;
  readonly files: readonly string[];
  readonly bytes: number;
  readonly lines: number;
  /** True when the files were already on disk from an earlier run with the same spec. */
  readonly reused: boolean;
  readonly generateSeconds: number;
}

interface Manifest {
  readonly version: number;
  readonly spec: Omit<CorpusSpec, 'dir'>;
  readonly files: readonly string[];
  readonly bytes: number;
  readonly lines: number;
}

/** sfc32: a small fast PRNG; seeded per file so files can be generated independently. */
function sfc32(a: number, b: number, c: number, d: number): () => number {
  return () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

function rngFor(seed: number, stream: number): () => number {
  const next = sfc32(
    random32(seed, stream, 1),
    random32(seed, stream, 2),
    random32(seed, stream, 3),
    random32(seed, stream, 4),
  );
  for (let i = 0; i < 16; i++) next(); // sfc32 wants a short warm-up
  return next;
}

const ONSETS = [
  '',
  '',
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'w',
  'y',
  'br',
  'ch',
  'cl',
  'dr',
  'fl',
  'gr',
  'pl',
  'pr',
  'sh',
  'st',
  'th',
  'tr',
  'wh',
];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'ea', 'ou', 'ai', 'ie', 'oo'];
const ACCENTED_NUCLEI = ['é', 'è', 'ä', 'ö', 'ü', 'å', 'ø', 'ñ'];
const CODAS = ['', '', '', '', 'n', 'r', 's', 't', 'l', 'd', 'm', 'nd', 'st', 'ng', 'ck', 'rt'];
const GREEK = 'αβγδεζηθικλμνξοπρστυφχψω';
const CYRILLIC = 'абвгдежзийклмнопрстуфхцчшщыэюя';

/**
 * The vocabulary by rank: frequent words are short, like in natural language (the token-weighted
 * mean is about 5 letters); 3% of the words are Greek or Cyrillic, some carry accented letters or
 * digits, so the Unicode word rule is exercised.
 */
export function buildVocabulary(seed: number, size: number): string[] {
  const rnd = rngFor(seed, 0x7fff_fff0);
  const seen = new Set<string>();
  const words: string[] = [];
  const pick = (xs: readonly string[] | string): string => xs[Math.floor(rnd() * xs.length)]!;
  while (words.length < size) {
    const rank = words.length + 1;
    const syllables = 1 + Math.floor(rnd() * (0.2 + Math.log10(rank) * 0.6));
    const kind = rnd();
    let w = '';
    if (kind < 0.015) {
      for (let i = 0, n = 1 + syllables * 2; i < n; i++) w += pick(GREEK);
    } else if (kind < 0.03) {
      for (let i = 0, n = 1 + syllables * 2; i < n; i++) w += pick(CYRILLIC);
    } else {
      for (let i = 0; i < syllables; i++)
        w += `${pick(ONSETS)}${pick(rnd() < 0.03 ? ACCENTED_NUCLEI : NUCLEI)}${pick(CODAS)}`;
      if (kind > 0.997) w += String(Math.floor(rnd() * 100)); // "mp3"-like tokens
    }
    if (w.length === 0 || seen.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  return words;
}

/** Cumulative Zipf weights, normalised to 1: sampling is a binary search for a uniform value. */
function zipfCdf(size: number, s: number): Float64Array {
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let r = 0; r < size; r++) {
    sum += 1 / Math.pow(r + 1, s);
    cdf[r] = sum;
  }
  for (let r = 0; r < size; r++) cdf[r] = cdf[r]! / sum;
  cdf[size - 1] = 1;
  return cdf;
}

function sampleRank(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function capitalize(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

const WRITE_CHUNK_CHARS = 1 << 20;

/** Writes one file of about `targetBytes` (whole lines), returns [bytes, lines]. */
function writeFile(
  path: string,
  targetBytes: number,
  seed: number,
  index: number,
  vocab: readonly string[],
  cdf: Float64Array,
): [number, number] {
  const rnd = rngFor(seed, index);
  const fd = openSync(path, 'w');
  let bytes = 0;
  let lines = 0;
  let parts: string[] = [];
  let partChars = 0;
  const flush = (): void => {
    const text = parts.join('');
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off);
    bytes += buf.length;
    parts = [];
    partChars = 0;
  };
  try {
    // Bytes are counted at each flush; characters approximate them (most text is ASCII) in between.
    while (bytes + partChars < targetBytes) {
      let line = '';
      if (rnd() < 0.02) {
        line = ''; // paragraph break
      } else {
        const n = 3 + Math.floor(rnd() * 16);
        let sentenceStart = true;
        for (let i = 0; i < n; i++) {
          let w = vocab[sampleRank(cdf, rnd())]!;
          const style = rnd();
          if (style < 0.004) w = w.toUpperCase();
          else if (sentenceStart || style < 0.03) w = capitalize(w);
          sentenceStart = false;
          if (i > 0) line += ' ';
          line += w;
          const punct = rnd();
          if (punct < 0.06) line += ',';
          else if (punct < 0.1) {
            line += '.';
            sentenceStart = true;
          } else if (punct < 0.105) line += "'s";
          else if (punct < 0.11) line += `-${vocab[sampleRank(cdf, rnd())]!}`;
          else if (punct < 0.113) line += ` (${Math.floor(rnd() * 2000)})`;
        }
        if (!sentenceStart) line += rnd() < 0.9 ? '.' : rnd() < 0.5 ? '?' : '!';
      }
      // A few Windows line ends: both sides must treat `\r\n` like `\n`.
      line += rnd() < 0.01 ? '\r\n' : '\n';
      parts.push(line);
      partChars += line.length;
      lines++;
      if (partChars >= WRITE_CHUNK_CHARS) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return [bytes, lines];
}

function readManifest(dir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

function sameSpec(m: Manifest, spec: CorpusSpec): boolean {
  const s = m.spec;
  return (
    m.version === GENERATOR_VERSION &&
    s.totalBytes === spec.totalBytes &&
    s.files === spec.files &&
    s.seed === spec.seed &&
    s.vocabulary === spec.vocabulary &&
    s.zipfExponent === spec.zipfExponent
  );
}

function filesIntact(dir: string, m: Manifest): boolean {
  try {
    let total = 0;
    for (const f of m.files) total += statSync(join(dir, f)).size;
    const listed = readdirSync(dir).filter((n) => !n.startsWith('.') && !n.startsWith('_'));
    return total === m.bytes && listed.length === m.files.length;
  } catch {
    return false;
  }
}

/** Generates the corpus into `spec.dir`, or reuses it when an identical one is already there. */
export function ensureCorpus(spec: CorpusSpec): Corpus {
  const t0 = performance.now();
  const cached = readManifest(spec.dir);
  if (cached && sameSpec(cached, spec) && filesIntact(spec.dir, cached)) {
    return {
      dir: spec.dir,
      files: cached.files,
      bytes: cached.bytes,
      lines: cached.lines,
      reused: true,
      generateSeconds: 0,
    };
  }
  rmSync(spec.dir, { recursive: true, force: true });
  mkdirSync(spec.dir, { recursive: true });
  const vocab = buildVocabulary(spec.seed, spec.vocabulary);
  const cdf = zipfCdf(spec.vocabulary, spec.zipfExponent);
  const perFile = Math.ceil(spec.totalBytes / spec.files);
  const files: string[] = [];
  let bytes = 0;
  let lines = 0;
  for (let i = 0; i < spec.files; i++) {
    const name = `text-${String(i).padStart(4, '0')}.txt`;
    const [b, l] = writeFile(join(spec.dir, name), perFile, spec.seed, i, vocab, cdf);
    files.push(name);
    bytes += b;
    lines += l;
  }
  const { dir: _dir, ...rest } = spec;
  const manifest: Manifest = { version: GENERATOR_VERSION, spec: rest, files, bytes, lines };
  const fd = openSync(join(spec.dir, MANIFEST), 'w');
  writeSync(fd, JSON.stringify(manifest, null, 2));
  closeSync(fd);
  return { dir: spec.dir, files, bytes, lines, reused: false, generateSeconds: (performance.now() - t0) / 1000 };
}
