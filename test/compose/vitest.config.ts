import { defineConfig } from 'vitest/config';

// `npm run test:compose` only: the root config's projects never include test/compose/*.e2e.ts.
export default defineConfig({
  test: {
    name: 'compose',
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/compose/**/*.e2e.ts'],
    // The image, built once for both files (file HA, etcd HA).
    globalSetup: ['test/compose/global-setup.ts'],
    // Building the image and a failover inside containers on a loaded 2-core machine.
    testTimeout: 15 * 60_000,
    hookTimeout: 10 * 60_000,
    fileParallelism: false,
  },
});
