import { defineConfig } from 'vitest/config';

// `npm run test:keep-running`: the real-process scenarios of execution.batch.job-recovery.
// keep-running-tasks alone. They also run in `npm test` (the integration project).
export default defineConfig({
  test: {
    name: 'keep-running',
    root: new URL('../..', import.meta.url).pathname,
    globalSetup: ['test/build-dist.ts'],
    include: ['test/keep-running/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
