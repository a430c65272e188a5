import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReplayBenchOptions } from './replay-bench-result.js';
import { FIRST_LEADER_EPOCH, SOURCE_VERTEX, type Fixture } from './replay-fixture.js';

/** A fake TaskManager process (fake-taskmanager.ts) holding its share of the retained partitions. */
export interface FakeTaskManager {
  readonly id: string;
  readonly address: string;
  close(): Promise<void>;
}

const FAKE_TM = join(dirname(fileURLToPath(import.meta.url)), 'fake-taskmanager.ts');

async function startFakeTaskManager(id: string, args: readonly string[]): Promise<FakeTaskManager> {
  const child = spawn(process.execPath, ['--import', 'tsx', FAKE_TM, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolvePort, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolvePort((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`fake TaskManager ${id} exited ${code} before serving: ${out}`)));
  });
  return {
    id,
    address: `127.0.0.1:${port}`,
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Every finished source subtask's partition, round-robin over the TaskManagers, plus stale ones no event names. */
export async function startFakeTaskManagers(f: Fixture, opts: ReplayBenchOptions): Promise<FakeTaskManager[]> {
  return Promise.all(
    Array.from({ length: opts.taskManagers }, (_, t) =>
      startFakeTaskManager(`tm-${t + 1}`, [
        '--job-id',
        f.graph.job_id,
        '--vertex-id',
        SOURCE_VERTEX,
        '--first',
        String(t),
        '--step',
        String(opts.taskManagers),
        '--count',
        String(Math.ceil((opts.executions - t) / opts.taskManagers)),
        '--subpartitions',
        String(f.subpartitions),
        '--stale',
        String(opts.stalePerTaskManager),
        '--epoch',
        String(FIRST_LEADER_EPOCH),
      ]),
    ),
  );
}
