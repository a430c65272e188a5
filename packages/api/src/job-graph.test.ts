import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, ReboundError, type JobGraph__Output } from '@rebound/core';
import { buildJob, defineJob, legacySequenceSource, type DataSet, type JobDefinition } from './index.js';
import { runLocally } from './testing/run-locally.js';

const wordcount = defineJob('wc', (env, args) => {
  env
    .readTextFiles(args[0]!)
    .flatMap((line) => line.split(' '))
    .map((w): [string, number] => [w, 1])
    .keyBy((t) => t[0])
    .sum(1)
    .writeAsText('/out', ([w, c]) => `${w}\t${c}`);
});

function inputDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-api-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function rejection(def: JobDefinition, args: string[] = []): Promise<ReboundError> {
  const err = await buildJob(def, args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReboundError);
  return err as ReboundError;
}

describe('buildJob', () => {
  it('chains operators into vertices and turns keyBy + reduce into a combinable HASH edge', async () => {
    const dir = inputDir({ 'a.txt': 'x y\n', 'b.txt': 'y\n', '.hidden': 'z\n', _SUCCESS: '' });
    const built = await buildJob(wordcount, [dir]);
    expect(built.name).toBe('wc');
    expect([...built.operators.keys()]).toEqual(['op-1', 'op-2', 'op-3', 'op-4', 'op-5', 'op-6']);
    expect([...built.operators.values()].map((t) => t.kind)).toEqual([
      'source',
      'flatMap',
      'map',
      'keyBy',
      'reduce',
      'sink',
    ]);
    expect(built.graph).toEqual({
      job_id: '',
      name: 'wc',
      job_args: [dir],
      config: {},
      module_digest: '',
      submitted_at_ms: 0,
      working_directory: process.cwd(),
      vertices: [
        {
          id: 'v-op-1',
          name: 'Source: TextFiles -> FlatMap -> Map',
          parallelism: 0, // decided by the JobMaster from the splits and the slots
          max_parallelism: 0,
          operator_ids: ['op-1', 'op-2', 'op-3'],
          inputs: [],
          source_operator_id: 'op-1',
          sink: null,
          source_supports_batch_snapshot: true,
        },
        {
          id: 'v-op-5',
          name: 'Sum(1) -> Sink: TextFiles',
          parallelism: 0,
          max_parallelism: 0,
          operator_ids: ['op-5', 'op-6'],
          inputs: [{ source_vertex_id: 'v-op-1', distribution: 'HASH', key_selector_id: 'op-4', combiner_id: 'op-5' }],
          source_operator_id: '',
          sink: { operator_id: 'op-6', path: '/out', collect: false },
          source_supports_batch_snapshot: false,
        },
      ],
    });
    const out = await runLocally(built);
    expect(out.get('/out')!.sort()).toEqual(['x\t1', 'y\t2']);
  });

  it('produces a graph that survives the JobGraphStore encoding unchanged', async () => {
    const built = await buildJob(wordcount, [inputDir({ 'a.txt': 'x\n' })]);
    const decoded = decodeMessage<JobGraph__Output>('JobGraph', encodeMessage('JobGraph', built.graph));
    expect(decoded).toEqual(built.graph);
  });

  it('gives the same ids and graph on every build', async () => {
    const dir = inputDir({ 'a.txt': 'x\n' });
    const a = await buildJob(wordcount, [dir]);
    const b = await buildJob(wordcount, [dir]);
    expect(b.graph).toEqual(a.graph);
    expect([...b.operators.keys()]).toEqual([...a.operators.keys()]);
  });

  it('builds a join with two HASH edges, left first', async () => {
    const def = defineJob('j', (env) => {
      const left = env.generateSequence(1, 10).name('Left');
      const right = env.generateRows(5, (i) => ({ k: i * 2, v: `r${i}` })).name('Right');
      left
        .join(right)
        .where((l) => l)
        .equalTo((r) => r.k)
        .with((l, r) => `${l}:${r.v}`)
        .writeAsText('/j');
    });
    const built = await buildJob(def, []);
    expect(built.graph.vertices!.map((v) => [v.id, v.name, v.operator_ids])).toEqual([
      ['v-op-1', 'Left', ['op-1']],
      ['v-op-2', 'Right', ['op-2']],
      ['v-op-5', 'Join -> Sink: TextFiles', ['op-5', 'op-6']],
    ]);
    expect(built.graph.vertices![2]!.inputs).toEqual([
      { source_vertex_id: 'v-op-1', distribution: 'HASH', key_selector_id: 'op-3', combiner_id: '' },
      { source_vertex_id: 'v-op-2', distribution: 'HASH', key_selector_id: 'op-4', combiner_id: '' },
    ]);
    expect((await runLocally(built)).get('/j')!.sort()).toEqual(['2:r1', '4:r2', '6:r3', '8:r4']);
  });

  it('lists vertices in topological order and chains after a reduce', async () => {
    const def = defineJob('multi', (env) => {
      const counted = env
        .generateSequence(0, 99)
        .keyBy((n) => n % 10)
        .count()
        .map(([k, c]) => ({ k, c }));
      counted
        .keyBy((r) => r.c)
        .count()
        .writeAsText('/m');
    });
    const built = await buildJob(def, []);
    const vs = built.graph.vertices!;
    expect(vs.map((v) => v.id)).toEqual(['v-op-1', 'v-op-4', 'v-op-8']);
    expect(vs[1]!.inputs![0]!.source_vertex_id).toBe('v-op-1');
    expect(vs[2]!.inputs![0]!.source_vertex_id).toBe('v-op-4');
    // count = map to [key, 1] (chained into the producer) + a summing reduce (the combiner)
    expect(vs[0]!.name).toBe('Source: Sequence -> Count: key');
    expect(vs[1]!.inputs![0]).toMatchObject({ key_selector_id: 'op-3', combiner_id: 'op-4' });
    expect((await runLocally(built)).get('/m')).toEqual(['[10,10]']);
  });

  it('sum/min/max copy records instead of mutating them', async () => {
    const rows = [
      { k: 'a', n: 3 },
      { k: 'a', n: 1 },
      { k: 'b', n: 5 },
    ];
    const results: Record<string, string[]> = {};
    for (const agg of ['sum', 'min', 'max'] as const) {
      const def = defineJob(agg, (env) => {
        const keyed = env.generateRows(rows.length, (i) => rows[i]!).keyBy((r) => r.k);
        keyed[agg]('n').writeAsText(`/${agg}`);
      });
      results[agg] = (await runLocally(await buildJob(def, []))).get(`/${agg}`)!.sort();
    }
    expect(results).toEqual({
      sum: ['{"k":"a","n":4}', '{"k":"b","n":5}'],
      min: ['{"k":"a","n":1}', '{"k":"b","n":5}'],
      max: ['{"k":"a","n":3}', '{"k":"b","n":5}'],
    });
    expect(rows).toEqual([
      { k: 'a', n: 3 },
      { k: 'a', n: 1 },
      { k: 'b', n: 5 },
    ]);
  });

  it('decides source parallelism: explicit, then the default option, else the JobMaster decides (0)', async () => {
    const def = (p?: number) =>
      defineJob('p', (env) => {
        env.generateSequence(1, 1000, { splitSize: 1, ...(p ? { parallelism: p } : {}) }).writeAsText('/p');
      });
    const par = async (d: JobDefinition, opts = {}) => (await buildJob(d, [], opts)).graph.vertices![0]!.parallelism;
    expect(await par(def(3), { defaultSourceParallelism: 7 })).toBe(3);
    expect(await par(def(), { defaultSourceParallelism: 7 })).toBe(7);
    expect(await par(def())).toBe(0);
    expect(await par(def(), { estimateSplits: false })).toBe(0);

    const chained = defineJob('c', (env) => {
      env
        .generateSequence(1, 10)
        .map((x) => x)
        .setParallelism(4)
        .writeAsText('/c');
    });
    expect(await par(chained)).toBe(4);
    const conflicting = defineJob('c2', (env) => {
      env
        .generateSequence(1, 10, { parallelism: 2 })
        .map((x) => x)
        .setParallelism(4)
        .writeAsText('/c');
    });
    expect((await rejection(conflicting)).message).toMatch(
      /sets parallelism 4 but is chained with 'Source: Sequence' \(op-1\) which sets 2/,
    );
  });

  it('marks sources without batch snapshots', async () => {
    const def = defineJob('legacy', (env) => {
      env.fromSource(legacySequenceSource(1, 10), 'Legacy').writeAsText('/l');
    });
    const v = (await buildJob(def, [])).graph.vertices![0]!;
    expect(v).toMatchObject({
      name: 'Legacy -> Sink: TextFiles',
      source_supports_batch_snapshot: false,
      parallelism: 0,
    });
  });

  it('rejects a dataset consumed twice, naming the operator', async () => {
    const def = defineJob('branch', (env) => {
      const words = env
        .generateSequence(1, 10)
        .map((n) => n * 2)
        .name('Double');
      words.writeAsText('/a');
      words.filter((n) => n > 4).writeAsText('/b');
    });
    const err = await rejection(def);
    expect(err.code).toBe('JOB_INVALID');
    expect(err.message).toMatch(/operator 'Double' \(op-2\) is consumed twice.*create the source twice/);
  });

  it('rejects a self-join (the same dataset on both sides)', async () => {
    const def = defineJob('self', (env) => {
      const s = env.generateSequence(1, 10);
      s.join(s)
        .where((x) => x)
        .equalTo((x) => x)
        .with((a) => a)
        .writeAsText('/s');
    });
    expect((await rejection(def)).message).toMatch(/is consumed twice/);
  });

  it('rejects a job without a sink and a dangling branch', async () => {
    const none = defineJob('nosink', (env) => {
      env.generateSequence(1, 10).map((n) => n);
    });
    const e1 = await rejection(none);
    expect(e1.code).toBe('JOB_INVALID');
    expect(e1.message).toBe("job 'nosink' defines no sink: write its result with writeAsText(path)");

    const dangling = defineJob('dangling', (env) => {
      env.generateSequence(1, 10).writeAsText('/ok');
      env
        .generateSequence(1, 10)
        .filter((n) => n > 1)
        .name('Unused');
    });
    const e2 = await rejection(dangling);
    expect(e2.message).toMatch(/output of operator 'Unused' \(op-4\) is never used/);
  });

  it('turns a failing build function into JOB_INVALID', async () => {
    const def = defineJob('boom', () => {
      throw new Error('missing --input\nsecond line');
    });
    const err = await rejection(def);
    expect(err.code).toBe('JOB_INVALID');
    expect(err.message).toBe("job 'boom' failed to build: missing --input");

    const asyncDef = defineJob('later', async (env) => {
      await Promise.resolve();
      env.generateSequence(1, 2).writeAsText('/x');
    });
    expect((await buildJob(asyncDef, [])).graph.vertices).toHaveLength(1);
  });

  it('rejects operators defined after build() returned', async () => {
    let saved: { generateSequence(a: number, b: number): DataSet<number> } | undefined;
    const def = defineJob('leak', (env) => {
      saved = env;
      env.generateSequence(1, 2).writeAsText('/x');
    });
    await buildJob(def, []);
    expect(() => saved!.generateSequence(1, 2)).toThrow(/already built/);
  });

  it('reports a missing input path at build time', async () => {
    const err = await rejection(wordcount, ['/nonexistent/rebound-input']);
    expect(err.code).toBe('JOB_INVALID');
    expect(err.message).toMatch(/input path '\/nonexistent\/rebound-input' does not exist/);
  });

  it('resolves relative paths against the cwd option', async () => {
    const def = defineJob('rel', (env) => {
      env.generateSequence(1, 2).writeAsText('out/x');
    });
    const built = await buildJob(def, [], { cwd: '/data' });
    expect(built.graph.vertices![0]!.sink).toEqual({ operator_id: 'op-2', path: '/data/out/x', collect: false });
  });

  it('validates defineJob arguments', () => {
    expect(() => defineJob('', () => {})).toThrow(/non-empty string/);
    expect(() => defineJob('x', 42 as never)).toThrow(/build must be a function/);
    expect(defineJob('x', () => {})).toMatchObject({ __reboundJob: 1, name: 'x' });
  });
});
