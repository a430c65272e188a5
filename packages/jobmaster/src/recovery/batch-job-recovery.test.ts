import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage } from '@rebound/core';
import type { JobGraph__Output } from '@rebound/core';
import { buildJob, defineJob, type OperatorCoordinator, type OperatorCoordinatorProvider } from '@rebound/api';
import { until } from '../testing/fake-task-manager.js';
import { InProcessLeaders, finish, type Deployment, type Leader } from '../testing/in-process-leaders.js';

/**
 * Recovery in one process, as Flink's BatchJobRecoveryTest does it: successive JobMasters on one
 * real event store, TaskManagers stood in for by a fake gateway. A leader "dies" by flushing what
 * it wrote and stopping; the next one replays and reconciles.
 */

const JOB_ID = 'abcdefabcdefabcdefabcdefabcdef01';

interface IdRequest {
  readonly count: number;
}
interface IdBlock {
  readonly start: number;
  readonly count: number;
}

/** examples/unique-ids.ts's coordinator: hands out blocks of ids, snapshot = the next id. */
class IdBlocks implements OperatorCoordinator<IdRequest, IdBlock, { next: number }> {
  readonly supportsBatchSnapshot = true;
  constructor(private next: number) {}
  handleRequest(_subtask: number, _attempt: number, r: IdRequest): IdBlock {
    const block = { start: this.next, count: r.count };
    this.next += r.count;
    return block;
  }
  snapshotState(): { next: number } {
    return { next: this.next };
  }
}
const idBlocks: OperatorCoordinatorProvider<IdRequest, IdBlock, { next: number }> = {
  create: () => new IdBlocks(0),
  restore: (_ctx, state) => new IdBlocks(state.next),
};

async function graphOf(def: ReturnType<typeof defineJob>, config: Record<string, string> = {}) {
  const built = await buildJob(def, []);
  // As the JobGraphStore hands it to every leader: decoded from its binary form, one instance.
  const graph = decodeMessage<JobGraph__Output>(
    'JobGraph',
    encodeMessage('JobGraph', { ...built.graph, job_id: JOB_ID, module_digest: '0'.repeat(64), config, vertices: (built.graph.vertices ?? []).map((v) => ({ ...v, max_parallelism: 4 })) }),
  );
  return { graph, operators: built.operators };
}

describe('batch job recovery in one process', () => {
  let dir: string;
  let out: string;
  let leaders: InProcessLeaders | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-recovery-'));
    out = join(dir, 'out');
  });

  afterEach(async () => {
    await leaders?.close();
    leaders = undefined;
  });

  async function writeSinkFile(d: Deployment, content: string): Promise<void> {
    await mkdir(dirname(d.tdd.sink_temp_file), { recursive: true });
    await writeFile(d.tdd.sink_temp_file, content);
  }

  /** Output lines of the committed sink files. */
  async function committedLines(): Promise<string[]> {
    const files = (await readdir(out)).filter((f) => f.startsWith('part-')).sort();
    const lines: string[] = [];
    for (const f of files) lines.push(...(await readFile(join(out, f), 'utf8')).split('\n').filter((l) => l !== ''));
    return lines;
  }

  /*
   * The three-leader scenario of issue 9. Leader 1 records V#1 finished after snapshot S1; leader 2
   * drops it (no snapshot covers it) and reruns it, while V#2 finishes with snapshot S2 and is
   * handed the ids V#1's first attempt had (the coordinator was restored to S1); leader 2 dies.
   * Leader 3 sees V#1's old finished event before S2: unless leader 2 recorded the drop as a
   * reset, V#1's old output comes back and the job commits duplicate ids.
   */
  it('an execution dropped at replay is recorded as reset, so a third leader does not resurrect it', async () => {
    const def = defineJob('unique-ids', (env) => {
      env
        .generateSequence(0, 99, { splitSize: 34 })
        .process(() => ({ processBatch: () => {} }), { coordinator: idBlocks })
        .writeAsText(out);
    });
    const { graph, operators } = await graphOf(def);
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const V = 'v-op-1';

    /** Runs subtask `d`: takes a block of 100 ids from the coordinator and writes them as its output. */
    async function numberLines(l: Leader, d: Deployment): Promise<void> {
      const res = await l.job.handleCoordinationRequest({ epoch: d.tdd.epoch, execution: d.tdd.execution, operator_id: 'op-2', request_json: JSON.stringify({ count: 100 }) });
      const block = JSON.parse(res.response_json ?? 'null') as IdBlock;
      await writeSinkFile(d, Array.from({ length: block.count }, (_, i) => `${block.start + i}`).join('\n') + '\n');
    }
    const subtask = (d: Deployment) => d.tdd.execution!.subtask;

    const l1 = await leaders.elect();
    await until(() => l1.gateway.of(V).length === 3, 'leader 1 to deploy three subtasks');
    const [a0, a1, a2] = l1.gateway.of(V).sort((x, y) => subtask(x) - subtask(y));
    await numberLines(l1, a0!);
    finish(l1.job, a0!); // carries snapshot S1 (the operator's first)
    await numberLines(l1, a1!);
    finish(l1.job, a1!); // within the snapshot pause: no snapshot covers it
    await numberLines(l1, a2!); // running when leader 1 dies
    await leaders.kill(l1);

    const l2 = await leaders.elect();
    await until(() => l2.gateway.of(V).length === 2, 'leader 2 to rerun V#1 and V#2');
    expect(l2.recoveries.at(-1)).toMatchObject({ executions_recovered: 1, executions_reset: 1 });
    const b2 = l2.gateway.of(V).find((d) => subtask(d) === 2)!;
    await numberLines(l2, b2);
    finish(l2.job, b2); // carries snapshot S2
    await leaders.kill(l2); // V#1's rerun never finished

    const l3 = await leaders.elect();
    expect(l3.job.graph.executionVertex(V, 1)!.state).not.toBe('FINISHED');
    await until(() => l3.gateway.of(V).length === 1, 'leader 3 to rerun V#1');
    const c1 = l3.gateway.of(V)[0]!;
    expect(subtask(c1)).toBe(1);
    await numberLines(l3, c1);
    finish(l3.job, c1);
    await until(() => l3.job.state === 'FINISHED', 'the commit');
    const ids = await committedLines();
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
  });
});
