import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { LocalCluster, suiteFailed } from './harness.js';
import { makeTempDir, readSinkLines } from './util.js';

const JOB = 'test/fixtures/relational.ts';

/**
 * union, distinct, outer joins, aggregate and topN through real TaskManagers (HASH exchanges,
 * combiners, adaptive parallelism) give what the reference interpreter gives.
 */
describe('relational operators on a cluster', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 2, slots: 2 });
    data = await makeTempDir('rebound-it-relational-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('match the reference interpreter', async () => {
    const out = join(data, 'out');
    const { jobId } = await cluster.submit(JOB, ['--output', out]);
    await cluster.waitForJob(jobId, 90_000);
    const expected = (await runLocally(await buildJob(await loadJobModule(JOB), ['--output', '/out']))).get('/out')!;
    const lines = await readSinkLines(out);
    const byOp = (ls: string[], op: string) => ls.filter((l) => (JSON.parse(l) as { op: string }).op === op);
    // (The unions in front of the one sink spread records by hash, so only sets compare; the
    // order of a top-N is checked by the tpch-q3 test.)
    for (const op of ['union', 'distinct', 'full', 'left', 'right', 'aggregate', 'top']) {
      expect(byOp(lines, op).sort(), op).toEqual(byOp(expected, op).sort());
    }
    expect(byOp(lines, 'top')).toHaveLength(5);
  });
});
