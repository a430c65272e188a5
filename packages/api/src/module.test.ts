import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '@rebound/core';
import { buildJob, bundleJobModule, loadJobModule, NO_CHECKPOINT } from './index.js';

const examples = resolve(import.meta.dirname, '../../../examples');
const work = mkdtempSync(join(tmpdir(), 'rebound-module-'));
let n = 0;

/** Writes `content` to a fresh directory without node_modules, as the JobMaster's HA dir is. */
function writeModule(content: string | Uint8Array, ext = '.mjs'): string {
  const p = join(work, `m${n++}${ext}`);
  writeFileSync(p, content);
  return p;
}

async function failure(p: Promise<unknown>): Promise<ReboundError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReboundError);
  return err as ReboundError;
}

describe('job module bundling and loading', () => {
  it('bundles examples/wordcount.ts into a self-contained module that builds the same graph', async () => {
    const entry = join(examples, 'wordcount.ts');
    const bundle = await bundleJobModule(entry);
    expect(bundle.digest).toMatch(/^[0-9a-f]{64}$/);
    const code = Buffer.from(bundle.code).toString('utf8');
    expect(code).not.toMatch(/grpc|protobufjs|pino/);
    expect(code).not.toMatch(/from ["'](?!node:)[^"']+["']/); // only node built-ins are imported
    expect((await bundleJobModule(entry)).digest).toBe(bundle.digest);

    const args = ['--input', examples, '--output', '/tmp/wc-out'];
    const fromSource = await buildJob(await loadJobModule(entry), args);
    const fromBundle = await buildJob(await loadJobModule(writeModule(bundle.code)), args);
    expect(fromBundle.graph).toEqual(fromSource.graph);
    expect(fromBundle.graph.vertices!.map((v) => v.operator_ids)).toEqual([
      ['op-1', 'op-2', 'op-3'],
      ['op-5', 'op-6'],
    ]);
    expect([...fromBundle.operators.keys()]).toEqual([...fromSource.operators.keys()]);
  });

  it('bundled code throws the runtime ReboundError class (shared through the registry)', async () => {
    const bundle = await bundleJobModule(join(import.meta.dirname, 'testing/fixtures/legacy-job.ts'));
    const built = await buildJob(await loadJobModule(writeModule(bundle.code)), []);
    const v = built.graph.vertices![0]!;
    expect(v.source_supports_batch_snapshot).toBe(false);
    const source = built.operators.get(v.source_operator_id!);
    if (source?.kind !== 'source') throw new Error('expected a source');
    const enumerator = await source.source.createEnumerator({
      parallelism: 1,
      assignSplit() {},
      signalNoMoreSplits() {},
    });
    const err = await failure(Promise.resolve().then(() => enumerator.snapshotState(NO_CHECKPOINT)));
    expect(err.code).toBe('ILLEGAL_STATE');
  });

  it('explains a missing module file', async () => {
    const err = await failure(loadJobModule('/nonexistent/job.ts'));
    expect(err.code).toBe('JOB_MODULE_INVALID');
    expect(err.message).toBe(
      "job module /nonexistent/job.ts does not exist; pass the path of a file that exports a job (end it with: export default defineJob('name', (env, args) => { ... }))",
    );
    const bundleErr = await failure(bundleJobModule('/nonexistent/job.ts'));
    expect(bundleErr.code).toBe('JOB_MODULE_INVALID');
    expect(bundleErr.message).toMatch(/^job module \/nonexistent\/job.ts does not exist/);
  });

  it('explains a module without a job', async () => {
    const none = writeModule('export const x = 1;\n');
    const e1 = await failure(loadJobModule(none));
    expect(e1.code).toBe('JOB_MODULE_INVALID');
    expect(e1.message).toBe(
      `job module ${none} has no default export; end it with: export default defineJob('name', (env, args) => { ... })`,
    );

    const wrong = writeModule('export default { name: "x", build() {} };\n');
    const e2 = await failure(loadJobModule(wrong));
    expect(e2.message).toMatch(/does not export a job by default; end it with: export default defineJob\(/);
  });

  it('explains a module that fails to load or to bundle, in one line', async () => {
    const throwing = writeModule('throw new Error("kaput\\nstack-ish detail");\nexport default 1;\n');
    const e1 = await failure(loadJobModule(throwing));
    expect(e1.message).toBe(`job module ${throwing} failed to load: kaput`);

    const broken = writeModule('export default defineJob(', '.ts');
    const e2 = await failure(bundleJobModule(broken));
    expect(e2.code).toBe('JOB_MODULE_INVALID');
    expect(e2.message).toMatch(new RegExp(`^job module ${broken} failed to bundle: m\\d+\\.ts:1:\\d+: `));
    expect(e2.message).not.toContain('\n');

    const badImport = writeModule("import { sleep } from '@rebound/core';\nexport default sleep;\n", '.ts');
    const e3 = await failure(bundleJobModule(badImport));
    expect(e3.message).toMatch(/may import only ReboundError and ErrorCode from @rebound\/core/);
  });
});
