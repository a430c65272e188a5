import { configDefaults, defineConfig } from 'vitest/config';

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
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/etcd/**'],
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Integration tests start whole clusters; two at once is what 2 cores take.
          fileParallelism: false,
        },
      },
    ],
  },
});
