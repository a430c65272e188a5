/**
 * The chaos harness's runtime poison job: its module loads and builds fine everywhere, and only
 * its code that runs on the JobMaster after loading misbehaves:
 *   --poison timer-throw|split-exit|coordinator-loop|split-alloc|none --output DIR
 *   timer-throw        the split enumerator throws from a timer once it started
 *   split-exit         process.exit(3) in the enumerator's handleSplitRequest
 *   coordinator-loop   an endless loop in the operator coordinator's handleRequest
 *   split-alloc        the enumerator allocates without bound in handleSplitRequest
 *   none               a plain job: numbers 0..99 plus an offset of 1000 from the coordinator
 * The isolation tests (packages/jobmaster/src/user-code, test/poison-job.test.ts) run it too.
 * No guard like poison.ts's --harmless-in-pid is needed: building the graph (in the harness, or
 * on a TaskManager) creates no enumerator or coordinator, and the tasks on the TaskManagers are
 * never poisoned, so the main job sharing them is unaffected.
 */
import {
  defineJob,
  sequenceSource,
  type OperatorCoordinatorProvider,
  type ProcessFunction,
  type Source,
  type SourceSplit,
  type SplitEnumerator,
} from '@rebound/api';
import { JobArgumentError, parseOptions, required } from '@rebound/example-support';

const USAGE = 'poison-runtime --poison timer-throw|split-exit|coordinator-loop|split-alloc|none --output DIR';
const MODES = ['timer-throw', 'split-exit', 'coordinator-loop', 'split-alloc', 'none'];

function poisoned<S extends SourceSplit, St>(inner: SplitEnumerator<S, St>, mode: string): SplitEnumerator<S, St> {
  return {
    supportsBatchSnapshot: inner.supportsBatchSnapshot,
    start() {
      if (mode === 'timer-throw')
        setTimeout(() => {
          throw new Error('chaos poison: the enumerator threw from a timer');
        }, 10);
      return inner.start();
    },
    handleSplitRequest(subtask) {
      if (mode === 'split-exit') process.exit(3);
      if (mode === 'split-alloc') {
        const hog: number[][] = [];
        for (;;) hog.push(new Array<number>(1_000_000).fill(7));
      }
      inner.handleSplitRequest(subtask);
    },
    addSplitsBack: (splits, subtask) => inner.addSplitsBack(splits, subtask),
    addReader: (subtask) => inner.addReader(subtask),
    snapshotState: (id) => inner.snapshotState(id),
    close: () => inner.close(),
  };
}

function numbers(mode: string): Source<number, SourceSplit, unknown> {
  const inner = sequenceSource(0, 99, { splitSize: 50 }) as unknown as Source<number, SourceSplit, unknown>;
  return {
    sourceName: 'Poisoned numbers',
    supportsBatchSnapshot: inner.supportsBatchSnapshot,
    estimateSplits: () => inner.estimateSplits?.(),
    createEnumerator: async (ctx) => poisoned(await inner.createEnumerator(ctx), mode),
    restoreEnumerator: async (ctx, state) => poisoned(await inner.restoreEnumerator(ctx, state), mode),
    createReader: (ctx) => inner.createReader(ctx),
  };
}

const addOffset = (): ProcessFunction<number, number, object, number> => ({
  async processBatch(xs, out, ctx) {
    const offset = await ctx.sendRequestToCoordinator({});
    for (const x of xs) out(x + offset);
  },
});

const offsets = (mode: string): OperatorCoordinatorProvider<object, number> => ({
  create: () => ({
    handleRequest: () => {
      if (mode === 'coordinator-loop')
        for (;;) {
          // A coordinator stuck in a synchronous wait for something that never comes.
        }
      return 1000;
    },
  }),
});

export default defineJob('chaos-poison-runtime', (env, args) => {
  const o = parseOptions(args, USAGE, ['poison', 'output']);
  const mode = required(o.poison, 'poison', USAGE);
  if (!MODES.includes(mode)) throw new JobArgumentError(`--poison must be one of ${MODES.join(', ')}, got '${mode}'`);
  env
    .fromSource(numbers(mode), 'Source: Poisoned numbers')
    .process(addOffset, { coordinator: offsets(mode) })
    .name('Add offset')
    .writeAsText(required(o.output, 'output', USAGE));
});
