/**
 * One replay of an existing job event log in a process of its own, as a new leader does after a
 * failover: no JIT warm-up, modules loaded cold, and a handler that keeps state per event (the
 * finished executions by subtask and the bytes they report) instead of a no-op. The page cache may
 * still hold the files (the benchmark wrote them just before; dropping it would disturb every
 * other process on a shared machine).
 *
 *   tsx bench/event-store/replay-fresh.ts --ha-dir DIR --job-id J --events N
 *
 * Prints one JSON line: {"events", "replayMs", "cpuMs", "sinceProcessStartMs"}.
 */
import { parseArgs } from 'node:util';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';

const { values } = parseArgs({
  options: { 'ha-dir': { type: 'string' }, 'job-id': { type: 'string' }, events: { type: 'string' } },
  strict: true,
});
const haDir = values['ha-dir'] ?? '';
const jobId = values['job-id'] ?? '';
const expected = Number(values.events);

const manager = new JobEventManager(
  new FileSystemJobEventStore({ haDir, jobId, epoch: 2, currentLeaderEpoch: () => 2 }),
);
await manager.start();
const finished = new Map<string, { attempt: number; bytes: number }>();
let seen = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await manager.replay((r) => {
  seen++;
  if (r.type === 'ExecutionVertexFinished') {
    const e = r.event;
    finished.set(`${e.vertex_id}#${e.subtask}`, {
      attempt: e.attempt,
      bytes: e.io_metrics?.subpartition_bytes.reduce((a, b) => a + b, 0) ?? 0,
    });
  } else if (r.type === 'ExecutionVertexReset') {
    for (const v of r.event.vertices) finished.delete(`${v.vertex_id}#${v.subtask}`);
  }
});
const replayMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await manager.stop(false);
if (!result.ok || seen !== expected) {
  process.stderr.write(
    `replay failed: ${seen} of ${expected} events, ${JSON.stringify(result.ok ? {} : result.failure)}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `${JSON.stringify({ events: seen, finished: finished.size, replayMs, cpuMs: (cpu.user + cpu.system) / 1000, sinceProcessStartMs: performance.now() })}\n`,
);
