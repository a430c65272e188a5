import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Unit files run two at a time and share their worker's imports; integration files one at a time
 * after them. Two integration files at once (REBOUND_INTEGRATION_WORKERS=2: same maxWorkers as
 * the unit project, so one queue, integration files first) halved the wall time of the pairs
 * tried, but recovery-stages next to recovery-partitions failed twice in two runs (the event log
 * read after a leader kill missing the finished sources it showed just before; a standby not
 * taking over within 30 s), while each passes alone: not the default until that is understood.
 */
const INTEGRATION_WORKERS = Number(process.env.REBOUND_INTEGRATION_WORKERS ?? 1);

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
          // The user-code worker tests start the worker entry that the build writes.
          globalSetup: ['test/build-dist.ts'],
          testTimeout: 20_000,
          // vitest's default is availableParallelism() - 1: one worker on 2 cores.
          maxWorkers: 2,
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
          // The tests start bin/rebound.js, which runs the build in packages/cli/dist.
          globalSetup: ['test/build-dist.ts'],
          // test/chaos runs under `npm run test:chaos` (its own command in .ci/run).
          exclude: [...configDefaults.exclude, 'test/etcd/**', 'test/chaos/**'],
          testTimeout: 120_000,
          // Above `local up --timeout` (60 s, test/harness.ts) plus the CLI's own start-up: a slow
          // start fails with local up's message naming the daemon, not a bare hook timeout.
          hookTimeout: 120_000,
          // Integration tests start whole clusters and kill them: one file at a time by default.
          fileParallelism: INTEGRATION_WORKERS > 1,
          maxWorkers: INTEGRATION_WORKERS > 1 ? 2 : 1,
        },
      },
    ],
  },
});
