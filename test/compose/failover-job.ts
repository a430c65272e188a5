/**
 * The compose failover suite's job and its host-side helpers: the seeded wordcount input with its
 * expected counts, an independent reading of the output, and the published REST ports.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

// The job: 12 files (12 source subtasks over 6 slots: two waves), each source sleeping per line so
// a wave takes ~30 s: long enough to kill the leader while the second wave runs even when a
// `docker compose` command takes 10 s on a loaded machine.
export const FILES = 12;
export const LINES = 600;
export const RECORD_DELAY_MS = 50;

/** A port free on the host's loopback now, for a JobMaster's published REST port. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

/** GET a JobMaster's REST API through its published port: status and JSON body (undefined when it does not answer). */
export async function rest(
  port: number,
  path: string,
  secret = '',
): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const headers: Record<string, string> = secret ? { authorization: `Bearer ${secret}` } : {};
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers,
      signal: AbortSignal.timeout(10_000),
      redirect: 'manual',
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** Seeded lines over a fixed vocabulary; the expected counts come from what was generated. */
export function generateInput(dir: string): Map<string, number> {
  const vocabulary = [
    'rebound',
    'flink',
    'batch',
    'leader',
    'epoch',
    'partition',
    'shuffle',
    'split',
    'café',
    'naïve',
    'über',
    'мир',
    '数据',
    '42',
    'x1',
  ];
  const separators = [' ', ', ', ' — ', '; ', ' (', ') ', '. '];
  let state = 2026;
  const next = (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  const counts = new Map<string, number>();
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < FILES; f++) {
    const lines: string[] = [];
    for (let l = 0; l < LINES; l++) {
      let line = '';
      const words = 2 + next(7);
      for (let w = 0; w < words; w++) {
        const word = vocabulary[next(vocabulary.length)]!;
        counts.set(word, (counts.get(word) ?? 0) + 1);
        line += (w > 0 ? separators[next(separators.length)] : '') + word;
      }
      lines.push(next(4) === 0 ? line.toUpperCase() : line);
    }
    writeFileSync(join(dir, `part-${String(f).padStart(2, '0')}.txt`), `${lines.join('\n')}\n`);
  }
  return counts;
}

/** Our own reading of the input: a word is a run of letters or digits, compared lower-cased. */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  let current = '';
  for (const ch of text) {
    if (/^[\p{L}\p{N}]$/u.test(ch)) current += ch;
    else if (current) {
      words.push(current.toLowerCase());
      current = '';
    }
  }
  if (current) words.push(current.toLowerCase());
  return words;
}

export function readOutput(dir: string): Map<string, number> {
  const got = new Map<string, number>();
  for (const name of readdirSync(dir).filter((n) => !n.startsWith('.') && !n.startsWith('_'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const [word, count] = line.split('\t');
      if (got.has(word!)) throw new Error(`'${word}' appears twice in the output`);
      got.set(word!, Number(count));
    }
  }
  return got;
}
