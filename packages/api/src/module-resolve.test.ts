import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '@rebound/core';
import { buildJob, bundleJobModule, loadJobModule } from './index.js';
import { packageOfSpecifier } from './module-bundle.js';

/** A directory outside the repository: no package.json, no node_modules above it. */
const outside = mkdtempSync(join(tmpdir(), 'rebound-outside-'));

async function bundleError(file: string): Promise<string> {
  const err = await bundleJobModule(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReboundError);
  return (err as ReboundError).message;
}

describe('job modules outside any package', () => {
  it('resolve @rebound/api and @rebound/api/testing to this copy', async () => {
    const job = join(outside, 'job.ts');
    writeFileSync(
      job,
      [
        "import { defineJob } from '@rebound/api';",
        "import { runLocally } from '@rebound/api/testing';",
        'export const local = runLocally;',
        "export default defineJob('outside', (env) => {",
        "  env.readTextFiles('/in').writeAsText('/out', (l) => l);",
        '});',
      ].join('\n'),
    );
    const bundle = await bundleJobModule(job);
    const file = join(outside, `${bundle.digest}.mjs`);
    writeFileSync(file, bundle.code);
    const built = await buildJob(await loadJobModule(file), [], { estimateSplits: false });
    expect(built.name).toBe('outside');
  });

  it('name the file, line, column, message and the offending line of a syntax error', async () => {
    const bad = join(outside, 'bad.ts');
    writeFileSync(bad, "import { defineJob } from '@rebound/api';\nconst x = ;\n");
    expect(await bundleError(bad)).toBe(
      `job module ${bad} failed to bundle: bad.ts:2:10: Unexpected ";" (line 2: const x = ;)`,
    );
  });

  it('name a missing package and how to install it', async () => {
    const missing = join(outside, 'missing.ts');
    writeFileSync(missing, "import chunk from 'lodash/chunk';\nexport default chunk;\n");
    expect(await bundleError(missing)).toBe(
      `job module ${missing} failed to bundle: missing.ts:1:18: Could not resolve "lodash/chunk" (line 1: import chunk from 'lodash/chunk';); package 'lodash' is not installed: run 'npm install lodash' in ${outside} (or a parent directory)`,
    );
  });

  it('tell bare package names from paths', () => {
    expect(packageOfSpecifier('lodash')).toBe('lodash');
    expect(packageOfSpecifier('@scope/pkg/deep/x.js')).toBe('@scope/pkg');
    expect(packageOfSpecifier('./local.js')).toBeUndefined();
    expect(packageOfSpecifier('/abs.js')).toBeUndefined();
    expect(packageOfSpecifier('node:fs')).toBeUndefined();
  });
});
