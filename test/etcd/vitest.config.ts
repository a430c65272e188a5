import { defineConfig } from 'vitest/config';

// `npm run test:etcd` only: tests against a real etcd (/usr/bin/etcd or $REBOUND_ETCD_BIN), which the default
// `npm test` leaves out (see the root config's excludes). .ci/run installs etcd before running it.
export default defineConfig({
  test: {
    name: 'etcd',
    root: new URL('../..', import.meta.url).pathname,
    // The tests start bin/rebound.js, which runs the build in packages/cli/dist.
    globalSetup: ['test/build-dist.ts'],
    include: ['packages/ha/src/**/*.etcd.test.ts', 'packages/*/src/**/*.drivers.test.ts', 'test/etcd/**/*.test.ts'],
    // *.drivers.test.ts run their file half with the unit tests and their etcd half here.
    env: { REBOUND_HA_DRIVER_TESTS: 'etcd' },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Each file starts its own etcd and clusters; one at a time on a loaded 2-core machine.
    fileParallelism: false,
  },
});
