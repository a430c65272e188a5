import { defineConfig } from 'vitest/config';

// `npm run test:netns` only (root, ip netns): the root config's projects never include
// test/netns/*.netns.ts, so the default `npm test` does not run these.
export default defineConfig({
  test: {
    name: 'netns',
    root: new URL('../..', import.meta.url).pathname,
    // The tests start bin/rebound.js, which runs the build in packages/cli/dist.
    globalSetup: ['test/build-dist.ts'],
    include: ['test/netns/**/*.netns.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Each file starts a cluster of its own on its own bridge; two at once is what 2 cores take.
    fileParallelism: false,
  },
});
