import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, ReboundError, IllegalStateError, InvalidArgumentError, JobNotFoundError } from '@rebound/core';
import type { Configuration, JobGraph__Output, JobResultChunk } from '@rebound/core';
import type { ExecutionGraph } from './execution-graph.js';

/**
 * collect(): the sink writes attempt-scoped files into the job's own directory in storageDir
 * and is committed with the other sinks; the Dispatcher then streams the committed part files
 * to clients (FetchJobResult), from any position a client already reached.
 */

/** Where a job's collect() sink writes: set by the Dispatcher at submission. */
export function collectDirOf(storageDir: string, jobId: string): string {
  return join(storageDir, 'jobs', jobId, 'collect');
}

/** The job graph with its collect() sink pointed at the job's collect directory. */
export function withCollectDir(graph: JobGraph__Output, storageDir: string): JobGraph__Output {
  if (!graph.vertices.some((v) => v.sink?.collect)) return graph;
  return {
    ...graph,
    vertices: graph.vertices.map((v) =>
      v.sink?.collect ? { ...v, sink: { ...v.sink, path: collectDirOf(storageDir, graph.job_id) } } : v,
    ),
  };
}

/** A committed collect() result above one of its limits. */
export class CollectLimitExceededError extends ReboundError {
  constructor(what: string, actual: number, key: string, limit: number) {
    super(
      ErrorCode.ILLEGAL_STATE,
      `collect() result has ${actual} ${what}, above ${key}=${limit}: raise it (-D ${key}=…) ` +
        'or write the result with a sink such as writeAsJsonLines',
    );
  }
}

async function countLines(path: string): Promise<number> {
  let n = 0;
  for await (const chunk of createReadStream(path)) {
    const buf = chunk as Buffer;
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  }
  return n;
}

/**
 * Checks the finished attempts' collect() files against `collect-sink.max-bytes` and
 * `collect-sink.max-rows` before they are committed: the result is held in storageDir and
 * streamed through the leader, so it must stay small. Bytes are checked first (a stat), so rows
 * are counted only in a result already bounded in size.
 */
export async function checkCollectLimits(graph: ExecutionGraph, config: Configuration): Promise<void> {
  const files = graph.vertices
    .filter((ejv) => ejv.jobVertex.sink?.collect)
    .flatMap((ejv) => ejv.vertices.map((ev) => ev.sinkTempFile))
    .filter((f) => f !== '');
  if (files.length === 0) return;
  const maxBytes = config.getBytes('collect-sink.max-bytes');
  let bytes = 0;
  for (const f of files) bytes += (await stat(f)).size;
  if (bytes > maxBytes) throw new CollectLimitExceededError('bytes', bytes, 'collect-sink.max-bytes', maxBytes);
  const maxRows = config.getInt('collect-sink.max-rows');
  let rows = 0;
  for (const f of files) rows += await countLines(f);
  if (rows > maxRows) throw new CollectLimitExceededError('rows', rows, 'collect-sink.max-rows', maxRows);
}

/** The committed files of a job's collect() result, in subtask order. */
export async function resultFilesOf(graph: JobGraph__Output): Promise<string[]> {
  const dir = graph.vertices.find((v) => v.sink?.collect)?.sink?.path;
  if (!dir) {
    throw new IllegalStateError(
      `job ${graph.job_id} has no collect() sink: its output is in the directories of its sinks`,
    );
  }
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    throw new JobNotFoundError(
      graph.job_id,
      `the collected result of job ${graph.job_id} is gone from ${dir}; run the job again`,
    );
  }
  return names
    .filter((n) => /^part-\d{5,}$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

export const DEFAULT_RESULT_CHUNK_BYTES = 256 * 1024;
const MAX_RESULT_CHUNK_BYTES = 4 * 1024 * 1024;

export interface ResultPosition {
  readonly fileIndex: number;
  readonly offset: number;
}

function badPosition(jobId: string, why: string): ReboundError {
  return new InvalidArgumentError(`FetchJobResult of job ${jobId}: ${why}`);
}

/**
 * The chunks of a committed result from `from` on, each of whole lines (a line longer than
 * `maxChunkBytes` is one chunk), read only as the caller asks for the next one. A position must
 * be a line boundary of an existing file (or the end of the result): anything else is one
 * INVALID_ARGUMENT error, never a partial line.
 */
export async function* readResultChunks(
  jobId: string,
  files: readonly string[],
  from: ResultPosition,
  maxChunkBytes: number = DEFAULT_RESULT_CHUNK_BYTES,
): AsyncGenerator<JobResultChunk> {
  const chunkBytes = Math.min(MAX_RESULT_CHUNK_BYTES, Math.max(1, maxChunkBytes || DEFAULT_RESULT_CHUNK_BYTES));
  const { fileIndex, offset } = from;
  if (!Number.isSafeInteger(fileIndex) || fileIndex < 0 || fileIndex > files.length)
    throw badPosition(jobId, `file index ${fileIndex} is not in 0..${files.length}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw badPosition(jobId, `offset ${offset} is negative`);
  if (fileIndex === files.length && offset !== 0)
    throw badPosition(jobId, `offset ${offset} is past the end of the result`);
  for (let i = fileIndex; i < files.length; i++) {
    const fh = await open(files[i]!, 'r');
    try {
      const size = (await fh.stat()).size;
      let pos = i === fileIndex ? offset : 0;
      if (pos > size) throw badPosition(jobId, `offset ${pos} is past the end of file ${i} (${size} bytes)`);
      if (pos > 0) {
        const before = Buffer.alloc(1);
        await fh.read(before, 0, 1, pos - 1);
        if (before[0] !== 10) throw badPosition(jobId, `offset ${pos} of file ${i} is not at a line boundary`);
      }
      if (pos === size) {
        yield { file_index: i, offset: pos, data: Buffer.alloc(0), end_of_file: true, file_count: files.length };
        continue;
      }
      while (pos < size) {
        let buf = Buffer.alloc(Math.min(chunkBytes, size - pos));
        let { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        let cut = buf.lastIndexOf(10, bytesRead - 1) + 1;
        // A line longer than a chunk: read on to its end, so every chunk is whole lines.
        while (cut === 0 && pos + bytesRead < size) {
          const more = Buffer.alloc(Math.min(chunkBytes, size - pos - bytesRead));
          const r = await fh.read(more, 0, more.length, pos + bytesRead);
          buf = Buffer.concat([buf.subarray(0, bytesRead), more.subarray(0, r.bytesRead)]);
          const nl = more.subarray(0, r.bytesRead).indexOf(10);
          bytesRead += r.bytesRead;
          if (nl !== -1) cut = bytesRead - r.bytesRead + nl + 1;
          if (r.bytesRead === 0) break;
        }
        if (cut === 0) cut = bytesRead; // a last line without its newline
        const end = pos + cut >= size;
        yield { file_index: i, offset: pos, data: buf.subarray(0, cut), end_of_file: end, file_count: files.length };
        pos += cut;
      }
    } finally {
      await fh.close();
    }
  }
}
