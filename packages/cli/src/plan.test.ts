import type { JobVertex } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { applyDefaultParallelism, planToJson, renderPlan } from './plan.js';

const vertices: JobVertex[] = [
  {
    id: 'v-src',
    name: 'Source: TextFiles -> FlatMap',
    parallelism: 18,
    source_operator_id: 'op-1',
    source_supports_batch_snapshot: true,
    inputs: [],
    operator_ids: ['op-1', 'op-2'],
  },
  {
    id: 'v-fixed',
    name: 'Source: Seq',
    parallelism: 3,
    source_operator_id: 'op-3',
    inputs: [],
    operator_ids: ['op-3'],
  },
  {
    id: 'v-sum',
    name: 'Sum(1) -> Sink',
    parallelism: 0,
    inputs: [{ source_vertex_id: 'v-src', distribution: 'HASH', combiner_id: 'op-4' }],
    operator_ids: ['op-5', 'op-6'],
    sink: { operator_id: 'op-6', path: '/out' },
  },
  {
    id: 'v-join',
    name: 'Join',
    parallelism: 5,
    inputs: [{ source_vertex_id: 'v-fixed', distribution: 'BROADCAST' }],
    operator_ids: ['op-7'],
  },
];

describe('-p / parallelism.default', () => {
  it('sets vertices without their own parallelism, sources included, and keeps explicit ones', () => {
    const out = applyDefaultParallelism(vertices, new Set(['v-fixed']), 4);
    expect(out.map((v) => [v.id, v.parallelism])).toEqual([
      ['v-src', 4],
      ['v-fixed', 3],
      ['v-sum', 4],
      ['v-join', 5],
    ]);
  });
});

describe('rebound info', () => {
  it('prints vertices, edges, parallelism, sources and sinks', () => {
    const plan = planToJson({
      name: 'wordcount',
      jobFile: 'job.ts',
      graph: { vertices },
      config: { 'parallelism.default': '4' },
    });
    expect(plan.edges).toEqual([
      { from: 'v-src', to: 'v-sum', distribution: 'HASH', combiner: true },
      { from: 'v-fixed', to: 'v-join', distribution: 'BROADCAST', combiner: false },
    ]);
    expect(plan.vertices[2]).toMatchObject({ parallelism: null, sink: { path: '/out' }, source: null });
    expect(renderPlan(plan)).toMatchInlineSnapshot(`
      [
        "Job wordcount (job.ts): 4 vertices, 2 edges; not run",
        "",
        "  VERTEX                        ID       PARALLELISM  ROLE",
        "  Source: TextFiles -> FlatMap  v-src    18           source (batch snapshots: resumes after a failover)",
        "  Source: Seq                   v-fixed  3            source (no batch snapshots: reruns whole after a failover)",
        "  Sum(1) -> Sink                v-sum    adaptive     sink → /out",
        "  Join                          v-join   5            -",
        "",
        "Edges (all BLOCKING: the producer finishes before its consumers start):",
        "  Source: TextFiles -> FlatMap ─HASH, pre-aggregated→ Sum(1) -> Sink",
        "  Source: Seq ─BROADCAST→ Join",
        "",
        "Job configuration:",
        "  parallelism.default = 4",
      ]
    `);
  });
});
