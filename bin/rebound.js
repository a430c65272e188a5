#!/usr/bin/env node
// The `rebound` command, and every daemon it starts: the compiled bundle in packages/cli/dist
// (scripts/build.mjs, run by `npm ci`, `npm test` and `npm run demo`). A build older than its
// sources is refused rather than rebuilt here: this start is on every command's critical path, many
// processes start at once (a local cluster, the tests), and a surprise build inside a daemon's
// start would race the others and blow its ready deadline. The check costs a stat per source file.
import { staleInput } from './freshness.js';

// A test run that built dist at its start sets REBOUND_DIST_CHECK=off and keeps that build.
const stale = process.env.REBOUND_DIST_CHECK === 'off' ? undefined : staleInput();
if (stale !== undefined) {
  process.stderr.write(`rebound: ${stale}; run \`npm run build\` (or npm ci) first\n`);
  process.exit(70);
}
await import('../packages/cli/dist/main.js');
