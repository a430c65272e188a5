import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Emit } from './operator-chain.js';

const FLUSH_AT = 256 * 1024;

/**
 * Writes a sink subtask's lines to its attempt-scoped temporary file. The JobMaster renames the
 * file of the finished attempt into place when the job finishes, so a rerun attempt never leaves
 * duplicate output behind.
 */
export class SinkWriter {
  readonly emit: Emit;
  private stream: WriteStream | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  recordsOut = 0;
  bytesOut = 0;

  constructor(
    private readonly path: string,
    format: (record: unknown) => string,
    header?: string,
  ) {
    if (header !== undefined) {
      // Part of the file, not a record: counted in bytes, not in recordsOut.
      this.pending.push(header + '\n');
      this.pendingBytes += header.length + 1;
    }
    this.emit = (r) => {
      const line = format(r) + '\n';
      this.pending.push(line);
      this.pendingBytes += line.length;
      this.recordsOut++;
    };
  }

  async open(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    this.stream = createWriteStream(this.path, { flags: 'w' });
    await new Promise<void>((resolve, reject) => {
      this.stream!.once('open', () => resolve());
      this.stream!.once('error', reject);
    });
  }

  async afterBatch(): Promise<void> {
    if (this.pendingBytes >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.bytesOut += Buffer.byteLength(chunk);
    const stream = this.stream!;
    if (!stream.write(chunk)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  }

  /** Flushes, closes and fsyncs: the file is durable before the task reports FINISHED. */
  async finish(): Promise<void> {
    await this.flush();
    const stream = this.stream!;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
    const fh = await open(this.path, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  abort(): void {
    this.stream?.destroy();
  }
}
