import { readFileSync } from 'node:fs';
import { userCodeError } from '../errors.js';
import type { Source, SourceReader, SplitEnumeratorContext } from '../source.js';
import type { SplitQueueEnumerator, SplitQueueState } from './split-queue-enumerator.js';
import { TextFileSource, readTextSplit, type TextFileSourceOptions, type TextFileSplit } from './text-file-source.js';

/**
 * One JSON value per line (JSON Lines), split by byte ranges exactly like text files: a JSON
 * text never holds a raw newline, so every newline is a record boundary. Blank lines are skipped.
 */
export class JsonLinesSource<T = unknown> implements Source<T, TextFileSplit, SplitQueueState<TextFileSplit>> {
  readonly sourceName = 'JsonLines';
  readonly supportsBatchSnapshot = true;
  private readonly text: TextFileSource;

  constructor(
    readonly path: string,
    private readonly options: Omit<TextFileSourceOptions, 'recordDelayMs'> = {},
  ) {
    this.text = new TextFileSource(path, options);
  }

  estimateSplits(): number {
    return this.text.estimateSplits();
  }

  createEnumerator(ctx: SplitEnumeratorContext<TextFileSplit>): Promise<SplitQueueEnumerator<TextFileSplit>> {
    return this.text.createEnumerator(ctx);
  }

  restoreEnumerator(
    ctx: SplitEnumeratorContext<TextFileSplit>,
    state: SplitQueueState<TextFileSplit>,
  ): SplitQueueEnumerator<TextFileSplit> {
    return this.text.restoreEnumerator(ctx, state);
  }

  createReader(): SourceReader<T, TextFileSplit> {
    const options = this.options;
    return {
      async *read(split: TextFileSplit): AsyncGenerator<T[]> {
        let index = 0; // lines of this split before the batch
        for await (const lines of readTextSplit(split, options)) {
          const out: T[] = [];
          for (let i = 0; i < lines.length; i++) {
            const line = lines[i]!;
            if (line.trim() === '') continue;
            try {
              out.push(JSON.parse(line) as T);
            } catch (err) {
              throw userCodeError(
                `${split.path}, line ${firstLineOf(split) + index + i}: not JSON (${(err as Error).message})`,
              );
            }
          }
          index += lines.length;
          if (out.length > 0) yield out;
        }
      },
    };
  }
}

/** The file line of the first line a text split owns; only computed for an error message. */
function firstLineOf(split: TextFileSplit): number {
  if (split.start === 0) return 1;
  const bytes = readFileSync(split.path).subarray(0, split.end);
  const nl = bytes.indexOf(0x0a, split.start - 1);
  let lines = 1;
  for (let i = 0; i <= nl; i++) if (bytes[i] === 0x0a) lines++;
  return lines;
}
