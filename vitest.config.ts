import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files run two at a time, unit and integration files in one queue (the same maxWorkers and
 * sequence.groupOrder put both projects in one group; the integration files, named first, start
 * first and the short unit files fill in behind them). An integration file spends most of its
 * time waiting on its cluster (record delays, heartbeats, lease timeouts), so one at a time
 * leaves a core idle on a 2-core machine; vitest's default for a project without file
 * parallelism is exactly that (and availableParallelism() - 1 = 1 worker for the unit project).
 * More than two clusters at once on 2 cores makes the timing-based jobs slower, not the run.
 * REBOUND_TEST_WORKERS overrides the count (1 reproduces the old, serial run).
 */
const WORKERS = Number(process.env.REBOUND_TEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // examples/: each example run on the single-process reference interpreter.
          include: ['packages/*/src/**/*.test.ts', 'examples/**/*.test.ts'],
          // Tests against a real etcd run under `npm run test:etcd` (test/etcd/vitest.config.ts).
          exclude: [...configDefaults.exclude, '**/*.etcd.test.ts'],
          testTimeout: 20_000,
          maxWorkers: WORKERS,
          // Most of a unit file's time was importing the module graph again (grpc-js, the
          // protos, pino): a worker keeps it between files. No unit test mocks modules, stubs
          // globals or fakes timers, which is what would leak from one file into the next.
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/etcd/**'],
          testTimeout: 120_000,
          // Above `local up --timeout` (60 s, test/harness.ts) plus the CLI's own start-up: a slow
          // start fails with local up's message naming the daemon, not a bare hook timeout.
          hookTimeout: 120_000,
          maxWorkers: WORKERS,
        },
      },
    ],
  },
});
