import { jobInvalid } from '../errors.js';
import type { BuiltJob } from '../job-graph.js';
import { groupingKey } from '../hash.js';
import type { ProcessContext } from '../coordinator.js';
import type { SourceSplit, SplitEnumeratorContext } from '../source.js';
import type { Transformation } from '../transformations.js';

/** The key of runLocally's result that holds collect()'s lines (one JSON value each). */
export const COLLECT_SINK_KEY = 'collect()';

/** The records collect() returned, from runLocally's result (empty without a collect()). */
export function collectedRecords(sinks: ReadonlyMap<string, readonly string[]>): unknown[] {
  return (sinks.get(COLLECT_SINK_KEY) ?? []).map((line) => JSON.parse(line) as unknown);
}

/**
 * A single-process reference interpreter of a built job, for tests of the API and the examples:
 * every vertex runs as one subtask, records stay in memory, and each sink's lines are returned
 * instead of written (a sink's header first). Not the TaskManager's operator runtime (no partitions, no parallelism).
 */
export async function runLocally(job: BuiltJob): Promise<Map<string, string[]>> {
  const ops = job.operators;
  const op = (id: string): Transformation => ops.get(id)!;
  const outputs = new Map<string, unknown[]>(); // vertex id → records at its tail
  const sinks = new Map<string, string[]>();

  const keyed = (vertexId: string, keyById: string): Map<unknown, { key: unknown; records: unknown[] }> => {
    const kb = op(keyById);
    if (kb.kind !== 'keyBy') throw jobInvalid(`${keyById} is not a keyBy`);
    const groups = new Map<unknown, { key: unknown; records: unknown[] }>();
    for (const r of outputs.get(vertexId)!) {
      const key = kb.keySelector(r);
      const g = groupingKey(key);
      let group = groups.get(g);
      if (!group) groups.set(g, (group = { key, records: [] }));
      group.records.push(r);
    }
    return groups;
  };

  for (const v of job.graph.vertices!) {
    const [headId, ...chainIds] = v.operator_ids!;
    const head = op(headId!);
    let records: unknown[] = [];
    if (head.kind === 'source') {
      const splits: SourceSplit[] = [];
      let done = false;
      const ctx: SplitEnumeratorContext<SourceSplit> = {
        parallelism: 1,
        assignSplit: (s) => {
          splits.push(s);
        },
        signalNoMoreSplits: () => {
          done = true;
        },
      };
      const enumerator = await head.source.createEnumerator(ctx);
      await enumerator.start();
      enumerator.addReader(0);
      const reader = head.source.createReader({ subtask: 0, parallelism: 1, attempt: 0 });
      while (!done) {
        enumerator.handleSplitRequest(0);
        while (splits.length > 0) {
          for await (const batch of reader.read(splits.shift()!)) records.push(...batch);
        }
      }
      await reader.close?.();
      await enumerator.close();
    } else if (head.kind === 'reduce') {
      const edge = v.inputs![0]!;
      for (const { records: group } of keyed(edge.source_vertex_id!, edge.key_selector_id!).values()) {
        records.push(group.reduce((a, b) => head.fn(a, b)));
      }
    } else if (head.kind === 'join') {
      const [l, r] = v.inputs!;
      const type = head.joinType ?? 'inner';
      const build = keyed(r!.source_vertex_id!, r!.key_selector_id!);
      const matched = new Set<unknown>();
      for (const [g, { records: lefts }] of keyed(l!.source_vertex_id!, l!.key_selector_id!)) {
        const rights = build.get(g)?.records;
        if (rights) matched.add(g);
        for (const left of lefts) {
          if (rights) for (const right of rights) records.push(head.fn(left, right));
          else if (type === 'leftOuter' || type === 'fullOuter') records.push(head.fn(left, null));
        }
      }
      if (type === 'rightOuter' || type === 'fullOuter') {
        for (const [g, { records: rights }] of build) {
          if (!matched.has(g)) for (const right of rights) records.push(head.fn(null, right));
        }
      }
    } else if (head.kind === 'union') {
      for (const edge of v.inputs!) records.push(...outputs.get(edge.source_vertex_id!)!);
    } else {
      throw jobInvalid(`vertex ${v.id} starts with a ${head.kind}`);
    }
    for (const id of chainIds) {
      const t = op(id);
      switch (t.kind) {
        case 'map':
          records = records.map((r) => t.fn(r));
          break;
        case 'flatMap':
          records = records.flatMap((r) => [...t.fn(r)]);
          break;
        case 'filter':
          records = records.filter((r) => t.fn(r));
          break;
        case 'process': {
          // The coordinator runs in this process; requests reach it directly, as JSON would carry them.
          const coordinator = t.coordinator?.create({ operatorId: t.id, operatorName: t.name, parallelism: 1 });
          await coordinator?.start?.();
          const ctx: ProcessContext<unknown, unknown> = {
            subtask: 0,
            parallelism: 1,
            attempt: 0,
            sendRequestToCoordinator: async (request) => {
              if (!coordinator) throw jobInvalid(`operator ${t.id} has no coordinator`);
              return JSON.parse(
                JSON.stringify(
                  (await coordinator.handleRequest(0, 0, JSON.parse(JSON.stringify(request ?? null)))) ?? null,
                ),
              ) as unknown;
            },
          };
          const fn = t.create();
          const out: unknown[] = [];
          const emit = (r: unknown): void => void out.push(r);
          await fn.open?.(ctx);
          await fn.processBatch(records, emit, ctx);
          await fn.close?.(emit, ctx);
          coordinator?.subtaskFinished?.(0, 0);
          await coordinator?.close?.();
          records = out;
          break;
        }
        case 'sink':
          sinks.set(t.collect ? COLLECT_SINK_KEY : t.path, [
            ...(t.header !== undefined ? [t.header] : []),
            ...records.map((r) => t.format(r)),
          ]);
          break;
        default:
          throw jobInvalid(`${t.kind} ${t.id} cannot be chained`);
      }
    }
    outputs.set(v.id!, records);
  }
  return sinks;
}
