/**
 * Numbers every input line with an id unique across the whole job: a user-defined operator
 * coordinator on the JobMaster hands out blocks of ids to the subtasks, which ask for a new block
 * when theirs runs out (Flink's zipWithUniqueId needs no coordinator but leaves gaps of up to
 * the parallelism; here gaps only come from failed attempts).
 *   --input PATH            a file, or a directory of files
 *   --output DIR            receives `id<TAB>line` lines
 *   --block-size N          ids per request to the coordinator (default 100)
 *   --record-delay-ms N     the source sleeps N ms per line (for demos and failover tests)
 *   --parallelism P         parallelism of the source and the numbering (default: the number of splits)
 *
 * The coordinator supports batch snapshots: after a JobMaster failover the new leader restores
 * the newest snapshot (the next id to hand out). Subtasks that finished after it, and those that
 * kept running through the failover (keep-running-tasks), are kept: `subtaskAdopted` takes the
 * blocks they got into the state, so no id is ever handed out twice.
 */
import {
  defineJob,
  type OperatorCoordinator,
  type OperatorCoordinatorProvider,
  type ProcessContext,
  type ProcessFunction,
} from '@rebound/api';
import { intOption, parseOptions, required } from '@rebound/example-support';

const USAGE = 'unique-ids --input PATH --output DIR [--block-size N] [--record-delay-ms N] [--parallelism P]';

interface IdRequest {
  readonly count: number;
}
interface IdBlock {
  readonly start: number;
  readonly count: number;
}
interface IdState {
  readonly next: number;
}

class IdBlockCoordinator implements OperatorCoordinator<IdRequest, IdBlock, IdState> {
  readonly supportsBatchSnapshot = true;

  constructor(private next: number) {}

  handleRequest(_subtask: number, _attempt: number, request: IdRequest): IdBlock {
    if (!Number.isSafeInteger(request.count) || request.count < 1)
      throw new Error(`a block needs a positive count, got ${String(request.count)}`);
    const block = { start: this.next, count: request.count };
    this.next += request.count;
    return block;
  }

  snapshotState(): IdState {
    return { next: this.next };
  }

  /**
   * A subtask kept running through a JobMaster failover may hold blocks handed out after the
   * snapshot this coordinator was restored from: none of them may be handed out again.
   */
  subtaskAdopted(_subtask: number, _attempt: number, blocks: readonly IdBlock[]): void {
    for (const b of blocks) this.next = Math.max(this.next, b.start + b.count);
  }
}

const idBlocks: OperatorCoordinatorProvider<IdRequest, IdBlock, IdState> = {
  create: () => new IdBlockCoordinator(0),
  restore: (_ctx, state) => new IdBlockCoordinator(state.next),
};

function numberLines(blockSize: number): ProcessFunction<string, string, IdRequest, IdBlock> {
  let next = 0;
  let end = 0;
  return {
    async processBatch(lines: string[], out: (line: string) => void, ctx: ProcessContext<IdRequest, IdBlock>) {
      for (const line of lines) {
        if (next === end) {
          const block = await ctx.sendRequestToCoordinator({ count: blockSize });
          next = block.start;
          end = block.start + block.count;
        }
        out(`${next++}\t${line}`);
      }
    },
  };
}

export default defineJob('unique-ids', (env, args) => {
  const o = parseOptions(args, USAGE, ['input', 'output', 'block-size', 'record-delay-ms', 'parallelism']);
  const blockSize = intOption(o['block-size'], 'block-size', 100, 1);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);
  const parallelism = o.parallelism === undefined ? undefined : intOption(o.parallelism, 'parallelism', 1, 1);
  env
    .readTextFiles(required(o.input, 'input', USAGE), { recordDelayMs, parallelism })
    .process(() => numberLines(blockSize), { coordinator: idBlocks })
    .name('Number lines')
    .writeAsText(required(o.output, 'output', USAGE));
});
