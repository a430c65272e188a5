import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { LocalCluster, suiteFailed, type TaskEvent } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

const NUMBERED = 'test/fixtures/numbered.ts';
const SOURCE_VERTEX = 'Source: Numbered -> Map';

interface VertexJson {
  id: string;
  name: string;
  parallelism: number;
  state: string;
  parallelismDecidedAdaptively: boolean;
  bytesConsumed: number;
  maxParallelism: number;
  tasks: Record<string, number>;
}

/** Attempts deployed and not (yet) finished, failed or canceled. */
function openAttempts(events: readonly TaskEvent[], jobId: string): TaskEvent[] {
  const open = new Map<string, TaskEvent>();
  for (const e of events) {
    if (e.jobId !== jobId) continue;
    const key = `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}`;
    if (e.event === 'task.deploy') open.set(key, e);
    else open.delete(key);
  }
  return [...open.values()];
}

async function committedFiles(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith('part-') || n === '_SUCCESS');
}

/** FLIP-27 sources and the adaptive batch scheduler (issue 3) on a real cluster. */
describe('sources and the adaptive scheduler', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 3, slots: 2 });
    data = await makeTempDir('rebound-it-sources-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('bad sources fail (or retry) with a message naming the vertex, and the cluster runs the next job', async () => {
    const out = (name: string): string => join(data, `bad-${name}`);
    const submit = (fail: string, extra: Record<string, string> = {}) =>
      cluster.submit(NUMBERED, ['--splits', '4', '--records', '50', '--output', out(fail), '--fail', fail], {
        config: extra,
      });
    // Submitted together: a failing job must not disturb the others.
    const [create, twice, once, always] = await Promise.all([
      submit('create-enumerator'),
      submit('assign-twice'),
      submit('reader-once'),
      submit('reader-always', { 'restart-strategy.fixed-delay.attempts': '2' }),
    ]);

    const createStatus = await cluster.waitForJob(create.jobId, 30_000, ['FAILED']);
    expect(createStatus.failure).toMatch(
      /^source 'Source: Numbered -> Map': creating the split enumerator failed: cannot list the numbered input: catalog unreachable$/,
    );
    const twiceStatus = await cluster.waitForJob(twice.jobId, 30_000, ['FAILED']);
    expect(twiceStatus.failure).toMatch(
      /^source 'Source: Numbered -> Map': the enumerator assigned split 'numbered-0' twice/,
    );

    // A reader failing mid-split is retried; the retry reads the split from the start, and the
    // failed attempt's records never reach the output.
    const onceStatus = await cluster.waitForJob(once.jobId, 30_000);
    expect(onceStatus.restarts).toBeGreaterThanOrEqual(1);
    expect(diffMaps(expectedNumbered(4, 50), await readSinkOutput(out('reader-once'), String))).toEqual([]);
    const onceFails = (await cluster.taskEvents()).filter((e) => e.jobId === once.jobId && e.event === 'task.fail');
    expect(onceFails.length).toBeGreaterThanOrEqual(1);
    expect(onceFails.every((e) => e.vertexName === SOURCE_VERTEX && e.attempt === 0)).toBe(true);

    // The restart strategy: 2 restarts allowed, the third failure fails the job with the reason.
    const alwaysStatus = await cluster.waitForJob(always.jobId, 30_000, ['FAILED']);
    expect(alwaysStatus.failure).toMatch(
      /^restart strategy exhausted after 2 restarts; last failure: Source: Numbered -> Map \(\d\/4\) attempt \d: corrupt record 25 in numbered-0 \(attempt \d\)$/,
    );
    expect(alwaysStatus.restarts).toBe(2);
    const alwaysFails = (await cluster.taskEvents()).filter((e) => e.jobId === always.jobId && e.event === 'task.fail');
    expect(alwaysFails).toHaveLength(3);
    expect(alwaysFails.every((e) => e.vertexName === SOURCE_VERTEX)).toBe(true);
    expect(alwaysStatus.vertices.find((v) => v.name === SOURCE_VERTEX)?.state).toBe('FAILED');

    for (const name of ['create-enumerator', 'assign-twice', 'reader-always'])
      expect(await committedFiles(out(name)), name).toEqual([]);

    // What the user sees.
    const humanAlways = await cluster.rebound(['status', always.jobId]);
    expect(humanAlways.code, humanAlways.stderr).toBe(0);
    expect(humanAlways.stdout).toMatch(/state\s+FAILED/);
    expect(humanAlways.stdout).toMatch(/restarts\s+2/);
    expect(humanAlways.stdout).toMatch(
      /failure\s+restart strategy exhausted after 2 restarts; last failure: Source: Numbered -> Map/,
    );

    // The cluster is fine: a good job after all that finishes with the right output.
    const good = await cluster.submit(NUMBERED, ['--splits', '5', '--records', '30', '--output', out('good')], {
      wait: true,
    });
    expect(good.code, good.stderr).toBe(0);
    expect(diffMaps(expectedNumbered(5, 30), await readSinkOutput(out('good'), String))).toEqual([]);

    // Failed, canceled and refused deployments gave their slots back: with nothing running, the
    // leader sees every slot free (a leaked slot would starve later jobs).
    await cluster.waitFor(
      async () => {
        const tms = (await cluster.overview()).task_managers;
        return tms.length === 3 && tms.every((t) => t.slots_free === t.slots_total);
      },
      10_000,
      'every slot to be free once no job runs',
    );
  });

  it('wordcount over many files decides the downstream parallelism from the bytes', async () => {
    const input = join(data, 'wc-in');
    const files = await generateTextFiles(input, { files: 12, linesPerFile: 80, seed: 33 });
    const expected = await countWordsInFiles(files);
    const settings = (avg: string) => ({
      'execution.batch.adaptive.auto-parallelism.min-parallelism': '1',
      'execution.batch.adaptive.auto-parallelism.max-parallelism': '12',
      'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': avg,
    });
    const [small, large] = await Promise.all([
      cluster.submit('examples/wordcount.ts', ['--input', input, '--output', join(data, 'wc-small')], {
        config: settings('2 kb'),
      }),
      cluster.submit('examples/wordcount.ts', ['--input', input, '--output', join(data, 'wc-large')], {
        config: settings('64 mb'),
      }),
    ]);
    await cluster.waitForJob(small.jobId, 60_000);
    await cluster.waitForJob(large.jobId, 60_000);
    expect(diffMaps(expected, await readSinkOutput(join(data, 'wc-small')))).toEqual([]);
    expect(diffMaps(expected, await readSinkOutput(join(data, 'wc-large')))).toEqual([]);

    const decided = async (jobId: string, avgBytes: number, viaCli: boolean): Promise<VertexJson> => {
      let vertices: VertexJson[];
      if (viaCli) {
        const r = await cluster.rebound(['status', jobId, '--json']);
        expect(r.code, r.stderr).toBe(0);
        vertices = (JSON.parse(r.stdout) as { vertices: VertexJson[] }).vertices;
      } else {
        vertices = (await cluster.status(jobId)).vertices; // the same JSON, asked in-process
      }
      const [source, counts, ...rest] = vertices;
      expect(rest).toEqual([]);
      // One split per file, so one source subtask per file (decided by the JobMaster: 12 splits
      // are fewer than SPLITS_PER_SLOT_TO_CAP per slot of the 3 x 2 slots, so no cap).
      expect(source).toMatchObject({ parallelism: 12, parallelismDecidedAdaptively: true, state: 'FINISHED' });
      expect(counts!.parallelismDecidedAdaptively).toBe(true);
      expect(counts!.bytesConsumed).toBeGreaterThan(0);
      // As packages/jobmaster/src/parallelism-decider.ts defines it: clamp(ceil(bytes / avg), min, max),
      // and never more subtasks than subpartitions (max-parallelism of them).
      const wanted = Math.ceil(counts!.bytesConsumed / avgBytes);
      expect(counts!.parallelism).toBe(Math.min(12, Math.max(1, Math.min(12, wanted))));
      expect(counts!.tasks.finished).toBe(counts!.parallelism);
      return counts!;
    };
    const smallCounts = await decided(small.jobId, 2 * 1024, true);
    const largeCounts = await decided(large.jobId, 64 * 1024 * 1024, false);
    expect(largeCounts.parallelism).toBe(1);
    // Not clamped either way: the parallelism really follows from the bytes.
    expect(smallCounts.parallelism).toBeGreaterThan(1);
    expect(smallCounts.parallelism).toBeLessThan(12);
    expect(smallCounts.bytesConsumed).toBe(largeCounts.bytesConsumed);
    // Each sink subtask commits one file.
    expect((await committedFiles(join(data, 'wc-small'))).filter((n) => n.startsWith('part-'))).toHaveLength(
      smallCounts.parallelism,
    );
  });

  // Last: it leaves the cluster with one TaskManager less.
  it('a TaskManager killed while sources run returns their splits; each is read into the output exactly once', async () => {
    const out = join(data, 'tm-kill');
    const splits = 12;
    const records = 40;
    const { jobId } = await cluster.submit(NUMBERED, [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--delay-ms',
      '25',
      '--parallelism',
      '4',
      '--output',
      out,
    ]);
    const leader = (await cluster.leader())!;
    // Each of the 4 readers reads about 3 one-second splits in turn; kill one that is running.
    const victim = await cluster.waitFor(
      async () => {
        const open = openAttempts(await cluster.taskEvents(), jobId);
        return open.length === 4 && Date.now() - Math.max(...open.map((e) => e.time)) > 1_200
          ? open[0]!.taskManagerId
          : undefined;
      },
      30_000,
      'all four readers to be past their first split',
    );
    await cluster.kill(victim, 'SIGKILL');
    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedNumbered(splits, records), await readSinkOutput(out, String))).toEqual([]);
    expect(final.restarts).toBeGreaterThanOrEqual(1);
    const source = final.vertices.find((v) => v.name === SOURCE_VERTEX)!;
    // Every record read by a finished attempt exactly once.
    expect(source.recordsIn).toBe(splits * records);

    const returned = (await cluster.log(leader.jobmasterId))
      .split('\n')
      .filter((l) => l.includes(jobId) && l.includes('returning splits of a reset reader'))
      .map((l) => (JSON.parse(l) as { splits: number }).splits);
    expect(returned.length, 'reset readers that returned splits').toBeGreaterThanOrEqual(1);
    expect(returned.every((n) => n >= 1)).toBe(true);
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
    expect(
      events.filter((e) => e.event === 'task.deploy' && e.attempt > 0).every((e) => e.taskManagerId !== victim),
    ).toBe(true);
  });
});
