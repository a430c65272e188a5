import { describe, expect, it } from 'vitest';
import { buildJob, defineJob } from './index.js';
import { COLLECT_SINK_KEY, collectedRecords, runLocally } from './testing/run-locally.js';

describe('collect()', () => {
  it('is a sink with no path of its own, flagged for the leader, whose lines are JSON values', async () => {
    const job = defineJob('c', (env) => {
      env.fromElements<unknown>({ a: 1, b: null }, [1, 'x'], 'plain').collect();
    });
    const built = await buildJob(job, []);
    const sink = built.graph.vertices!.find((v) => v.sink)!.sink!;
    expect(sink).toMatchObject({ path: '', collect: true });
    const out = await runLocally(built);
    expect(out.get(COLLECT_SINK_KEY)).toEqual(['{"a":1,"b":null}', '[1,"x"]', '"plain"']);
    expect(collectedRecords(out)).toEqual([{ a: 1, b: null }, [1, 'x'], 'plain']);
  });

  it('a job collects one dataset: a second collect() is refused at build', async () => {
    const job = defineJob('c2', (env) => {
      env.fromElements(1).collect();
      env.fromElements(2).collect();
    });
    await expect(buildJob(job, [])).rejects.toThrow('calls collect() more than once');
  });

  it('other sinks keep their paths and no collect flag', async () => {
    const job = defineJob('w', (env) => {
      env.fromElements(1).writeAsText('/tmp/rebound-out');
    });
    const sink = (await buildJob(job, [])).graph.vertices!.find((v) => v.sink)!.sink!;
    expect(sink).toEqual({ operator_id: expect.any(String), path: '/tmp/rebound-out', collect: false });
  });
});
