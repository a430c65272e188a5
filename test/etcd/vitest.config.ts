import { defineConfig } from 'vitest/config';

// `npm run test:etcd` only: tests against a real etcd (Debian's etcd-server), which the default
// `npm test` leaves out (see the root config's excludes). .ci/run installs etcd before running it.
export default defineConfig({
  test: {
    name: 'etcd',
    root: new URL('../..', import.meta.url).pathname,
    include: ['packages/ha/src/**/*.etcd.test.ts', 'test/etcd/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Each file starts its own etcd and clusters; one at a time on a loaded 2-core machine.
    fileParallelism: false,
  },
});
