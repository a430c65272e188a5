import { open, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ConfigError, sleep } from '@rebound/core';
import { prettyFactory } from 'pino-pretty';
import { ClusterPaths, tryReadClusterFile } from './cluster-file.js';
import type { CliIo } from './io.js';
import type { LogsOptions } from './options.js';

/** pino's numeric levels. */
const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** How often `--follow` looks for new lines. */
const FOLLOW_POLL_MS = 250;

interface LogSource {
  readonly id: string;
  readonly path: string;
  offset: number;
  /** A line cut at the end of the last read (the daemon was writing it). */
  partial: string;
}

/** A log line kept for output: its time (for merging files) and text. */
interface Entry {
  readonly time: number;
  readonly id: string;
  readonly text: string;
}

/** Lines of one read: JSON lines below `minLevel` or about another job are dropped; other text (a crash on stderr) is kept. */
export function selectLines(text: string, id: string, minLevel: number, jobId?: string): Entry[] {
  const out: Entry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let rec: { level?: unknown; time?: unknown; jobId?: unknown } | undefined;
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      rec = undefined;
    }
    if (rec && typeof rec === 'object') {
      if (typeof rec.level === 'number' && rec.level < minLevel) continue;
      // A prefix names the job as in `status` (a full id is its own prefix).
      if (jobId && !(typeof rec.jobId === 'string' && rec.jobId.startsWith(jobId.toLowerCase()))) continue;
      out.push({ time: typeof rec.time === 'number' ? rec.time : 0, id, text: line });
    } else if (!jobId) {
      out.push({ time: 0, id, text: line });
    }
  }
  return out;
}

async function sourcesOf(workdir: string, id: string | undefined): Promise<LogSource[]> {
  const dir = ClusterPaths.logsDir(workdir);
  const names = await readdir(dir).catch(() => undefined);
  if (!names) {
    const hasCluster = (await tryReadClusterFile(workdir).catch(() => undefined)) !== undefined;
    throw new ConfigError(
      hasCluster
        ? `no logs directory in ${workdir}`
        : `no cluster in ${workdir} (no logs/ there); pass --cluster with the directory of a cluster started with 'rebound local up'`,
    );
  }
  const ids = names
    .filter((n) => n.endsWith('.log'))
    .map((n) => basename(n, '.log'))
    .sort();
  if (id !== undefined && !ids.includes(id)) {
    throw new ConfigError(`no log of '${id}' in ${dir}; the processes with logs are: ${ids.join(', ') || 'none'}`);
  }
  return (id === undefined ? ids : [id]).map((i) => ({ id: i, path: join(dir, `${i}.log`), offset: 0, partial: '' }));
}

/** Reads what was appended to `src` since the last call (whole lines only). */
async function readNew(src: LogSource): Promise<string> {
  const size = await stat(src.path).then(
    (s) => s.size,
    () => 0,
  );
  if (size < src.offset) src.offset = 0; // truncated or replaced: start over
  if (size === src.offset) return '';
  const fh = await open(src.path, 'r');
  try {
    const buf = Buffer.alloc(size - src.offset);
    const { bytesRead } = await fh.read(buf, 0, buf.length, src.offset);
    src.offset += bytesRead;
    const text = src.partial + buf.subarray(0, bytesRead).toString('utf8');
    const cut = text.lastIndexOf('\n');
    src.partial = cut < 0 ? text : text.slice(cut + 1);
    return cut < 0 ? '' : text.slice(0, cut + 1);
  } finally {
    await fh.close();
  }
}

/**
 * `rebound logs [ID]`: the pino JSON logs of a local cluster made readable with pino-pretty
 * (the files on disk stay JSON; `--json` prints them as they are). Without ID, every process's
 * log merged by time, each line prefixed with the process id.
 */
export async function logs(opts: LogsOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const minLevel = LEVELS[opts.level];
  if (minLevel === undefined)
    throw new ConfigError(`--level ${opts.level}: use one of ${Object.keys(LEVELS).join(', ')}`);
  const sources = await sourcesOf(workdir, opts.id);
  const color = io.stdout.isTTY === true && io.env.NO_COLOR === undefined;
  const pretty = prettyFactory({
    colorize: color,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name,processId,component',
    messageFormat: '{if component}{component}: {end}{msg}',
    singleLine: true,
  });
  const many = sources.length > 1;
  const print = (entries: Entry[]): void => {
    entries.sort((a, b) => a.time - b.time);
    for (const e of entries) {
      if (opts.json) {
        io.stdout.write(`${e.text}\n`);
        continue;
      }
      const text = e.text.startsWith('{') ? pretty(e.text) : `${e.text}\n`;
      io.stdout.write(many ? text.replace(/^(?=.)/gm, `${e.id.padEnd(5)} | `) : text);
    }
  };
  const poll = async (): Promise<void> => {
    const entries: Entry[] = [];
    for (const src of sources) entries.push(...selectLines(await readNew(src), src.id, minLevel, opts.jobId));
    print(entries);
  };
  await poll();
  if (!opts.follow) return 0;
  const stop = signal ?? abortOnSigint();
  while (!stop.aborted) {
    await sleep(FOLLOW_POLL_MS, stop).catch(() => undefined);
    if (!opts.id) {
      // Processes started since (local start-taskmanager) join the merged view.
      for (const s of await sourcesOf(workdir, undefined)) if (!sources.some((x) => x.id === s.id)) sources.push(s);
    }
    await poll();
  }
  return 0;
}

/** `--follow` ends on Ctrl-C with exit code 0, like `tail -f`. */
function abortOnSigint(): AbortSignal {
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  return ac.signal;
}
