import { defineConfig } from 'vitest/config';

// `npm run test:chaos`: the chaos harness's fixed CI seeds (each run a cluster of its own, faults
// and all), apart from `npm test` so that its wall time stays within budget. .ci/run runs it.
export default defineConfig({
  test: {
    name: 'chaos',
    root: new URL('../..', import.meta.url).pathname,
    globalSetup: ['test/build-dist.ts'],
    include: ['test/chaos/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
