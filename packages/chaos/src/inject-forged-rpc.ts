import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClusterSecurity, Configuration } from '@rebound/core';
import type { FaultPlan } from './faults.js';
import {
  FORGED_CALLS,
  forgeryInjected,
  forgeryProblem,
  sendForgedCall,
  type ForgedCall,
  type ForgedCallOutcome,
  type ForgeryContext,
} from './forgery.js';
import type { FaultHooks } from './inject-hostile.js';
import { finishedPartitions } from './observe.js';
import { Prng } from './prng.js';
import type { RunContext } from './run-context.js';
import { parseTaskEvents } from './task-log.js';

/**
 * The forged-rpc fault: the calls of src/forgery.ts, in a drawn order, to the leader and a
 * TaskManager that runs a task of the job, without credentials, with a wrong secret, or with the
 * cluster's own but a made-up epoch; and the verdict's check (runner.ts) that they raised no fence.
 */

type Of<K extends FaultPlan['kind']> = Extract<FaultPlan, { kind: K }>;
type ClusterProcess = Awaited<ReturnType<RunContext['cluster']['processes']>>[number];

/** A running execution of the job on `tmId` (its last lifecycle event is the deploy), from the TaskManager's log. */
async function runningExecution(r: RunContext, tmId: string): Promise<ForgeryContext['running'] | undefined> {
  const events = parseTaskEvents(await r.cluster.log(tmId), tmId).filter((e) => e.jobId === r.jobId);
  const last = new Map<string, (typeof events)[number]>();
  for (const e of events) last.set(`${e.vertexId}#${e.subtask}#${e.attempt}#${e.epoch ?? 0}`, e);
  const live = [...last.values()].filter((e) => e.event === 'task.deploy').at(-1);
  return live ? { job_id: r.jobId, vertex_id: live.vertexId, subtask: live.subtask, attempt: live.attempt } : undefined;
}

/** The cluster secret's length, but not the secret: a call with it must be refused like one without. */
async function wrongSecurity(r: RunContext, seed: number): Promise<ClusterSecurity> {
  const file = join(r.workdir, 'wrong-secret');
  const prng = new Prng(seed);
  await writeFile(file, `${Array.from({ length: 64 }, () => prng.int(0, 15).toString(16)).join('')}\n`, {
    mode: 0o600,
  });
  await chmod(file, 0o600);
  return ClusterSecurity.of(Configuration.of({ 'security.auth.token-file': file }));
}

/**
 * The TaskManager hostile calls aim at: `preferredId` if it runs a task of the job, else the first
 * live one that does (calls at a made-up execution prove nothing), else the first live one.
 */
export async function targetTaskManager(
  r: RunContext,
  preferredId: string,
): Promise<{ tm: ClusterProcess | undefined; running: ForgeryContext['running'] | undefined }> {
  const tms = (await r.cluster.processes()).filter((p) => p.role === 'taskmanager');
  const wanted = tms.find((p) => p.id === preferredId);
  let tm: ClusterProcess | undefined;
  for (const p of wanted ? [wanted, ...tms.filter((x) => x !== wanted)] : tms) {
    if (!(await r.cluster.isAlive(p.id))) continue;
    tm ??= p;
    const running = await runningExecution(r, p.id);
    if (running) return { tm: p, running };
  }
  return { tm, running: undefined };
}

export async function injectForgedRpc(r: RunContext, f: Of<'forged-rpc'>, h: FaultHooks): Promise<void> {
  const leader = await r.cluster.leader();
  if (!leader || !(await r.cluster.isAlive(leader.jobmasterId))) return h.note('no live leader to forge calls to');
  const jm = await r.cluster.process(leader.jobmasterId);
  const { tm, running } = await targetTaskManager(r, `tm-${f.taskManager}`);
  if (!tm) return h.note('no live TaskManager to forge calls to');
  const target = tm;
  const partition = (await finishedPartitions(r)).find((p) => p.holderId === target.id);
  const ctx: ForgeryContext = {
    jobId: r.jobId,
    leaderAddress: jm.address,
    leaderEpoch: leader.epoch,
    taskManagerId: tm.id,
    taskManagerAddress: tm.address,
    running: running ?? { job_id: r.jobId, vertex_id: 'forged-vertex', subtask: 0, attempt: 0 },
    runningFound: running !== undefined,
    partition: partition
      ? {
          job_id: r.jobId,
          vertex_id: partition.vertexId,
          subtask: partition.subtask,
          attempt: partition.attempt,
          epoch: partition.epoch,
        }
      : { job_id: r.jobId, vertex_id: 'forged-vertex', subtask: 0, attempt: 0, epoch: leader.epoch },
    partitionFound: partition !== undefined,
  };
  const credentials = {
    none: ClusterSecurity.none(),
    wrong: await wrongSecurity(r, f.orderSeed),
    cluster: r.cluster.security(),
  };
  // The order is drawn: a forged call must be refused whatever came before it.
  const prng = new Prng(f.orderSeed);
  const calls = FORGED_CALLS.filter((c) => !c.needsPartition || ctx.partitionFound);
  for (let i = calls.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [calls[i], calls[j]] = [calls[j]!, calls[i]!];
  }
  const at = Date.now();
  const label = `forged-rpc: ${calls.length} forged calls to ${jm.id} (epoch ${leader.epoch}) and ${tm.id}`;
  await r.disrupt(label, at);
  r.forgeries.push({ at, label, leaderEpoch: leader.epoch });
  const sent: { call: ForgedCall; outcome: ForgedCallOutcome }[] = [];
  for (const call of calls) {
    const o = await sendForgedCall(call, ctx, credentials[call.credentials]);
    sent.push({ call, outcome: o });
    const problem = forgeryProblem(call, o);
    if (problem) r.problem('forgery-accepted', problem);
    if (o.outcome === 'unreachable') h.note(`${call.name}: target unreachable (${o.message.split('\n')[0]})`);
  }
  const outcomes = sent.map((x) => x.outcome);
  const reached = outcomes.filter((o) => o.outcome !== 'unreachable').length;
  if (forgeryInjected(sent, ctx)) h.mark(at);
  else h.note('not injected: no forged call reached a running task of the job');
  h.note(
    `${reached} of ${calls.length} forged calls reached ${jm.id}/${tm.id} (running task ${running ? `${running.vertex_id}#${running.subtask}` : 'none found'}, ` +
      `partition ${partition?.name ?? 'none found'}); ${outcomes.filter((o) => o.outcome === 'refused').length} refused`,
  );
}

/** Reads `fence.reject` lines of the TaskManagers: a fence raised to an epoch no leader held was poisoned. */
export async function poisonedFences(r: RunContext, since: number): Promise<string[]> {
  const realMax = Math.max(0, ...r.monitor.epochChanges.map((c) => c.epoch));
  const found: string[] = [];
  for (const p of (await r.cluster.processes()).filter((x) => x.role === 'taskmanager')) {
    for (const line of (await r.cluster.log(p.id)).split('\n')) {
      if (!line.includes('"fence.reject"')) continue;
      let o: { time?: number; epoch?: number; highestEpoch?: number; method?: string };
      try {
        o = JSON.parse(line) as typeof o;
      } catch {
        continue;
      }
      if ((o.time ?? 0) < since || (o.highestEpoch ?? 0) <= realMax) continue;
      found.push(
        `${p.id} holds epoch ${o.highestEpoch} (no leader had it; the highest was ${realMax}) and refused ${o.method} of epoch ${o.epoch}`,
      );
      break;
    }
  }
  return found;
}
