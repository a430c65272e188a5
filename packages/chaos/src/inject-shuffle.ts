import { open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FaultPlan } from './faults.js';
import { finishedPartitions, type PartitionOnDisk } from './observe.js';
import type { RunContext } from './run-context.js';

type ShuffleFault = Extract<
  FaultPlan,
  { kind: 'leader-and-tm-kill' | 'shuffle-worker-kill' | 'shuffle-worker-partition-damage' }
>;

interface Hooks {
  note(s: string): void;
  mark(at: number): void;
}

/**
 * The subtasks with a finished partition that only `dead` holders kept: a partition is named by
 * its attempt, and a subtask counts as lost when any of its attempts' partitions is. That errs
 * towards excusing a rerun, never towards blaming one.
 */
export function lostWith(partitions: readonly PartitionOnDisk[], dead: ReadonlySet<string>): Set<string> {
  const holders = new Map<string, { key: string; ids: Set<string> }>();
  for (const p of partitions) {
    const h = holders.get(p.name) ?? { key: p.key, ids: new Set<string>() };
    h.ids.add(p.holderId);
    holders.set(p.name, h);
  }
  const lost = new Set<string>();
  for (const { key, ids } of holders.values()) if ([...ids].every((id) => dead.has(id))) lost.add(key);
  return lost;
}

/** Stops the standbys and kills the leader, so that the next step happens while nobody leads. */
async function takeLeaderDown(r: RunContext, label: string) {
  const leader = await r.cluster.leader();
  const standbys = (await r.aliveJobMasters()).filter((id) => id !== leader?.jobmasterId);
  await r.stopJobMasters(standbys);
  const k = await r.killLeader(label);
  return { k, standbys };
}

async function bringLeaderBack(r: RunContext, down: Awaited<ReturnType<typeof takeLeaderDown>>): Promise<void> {
  await r.contJobMasters(down.standbys);
  if (!down.k) return;
  r.restartJobMaster(down.k.id);
  await r.awaitRecovery(down.k.epoch);
}

/**
 * Faults of the remote shuffle (issue 22): a host dies with the leader, a shuffle worker dies,
 * a partition on a worker's disk is damaged. The verdict is the accounting's: on remote shuffle
 * no finished task may rerun unless the fault destroyed every copy of its partition.
 */
export async function injectShuffleFault(r: RunContext, f: ShuffleFault, { note, mark }: Hooks): Promise<void> {
  switch (f.kind) {
    case 'leader-and-tm-kill': {
      const k = await r.killLeader('leader-and-tm-kill');
      if (!k) return note('no live leader to kill');
      const tm = `tm-${f.taskManager}`;
      if (await r.killTaskManager(tm, 'leader-and-tm-kill')) {
        mark(k.at);
        r.restartTaskManager(tm);
      } else {
        note(`${tm} was not running: only the leader was killed`);
      }
      r.restartJobMaster(k.id);
      await r.awaitRecovery(k.epoch);
      return;
    }
    case 'shuffle-worker-kill': {
      const id = `sw-${f.worker}`;
      const down = f.duringFailover ? await takeLeaderDown(r, 'shuffle-worker-kill (leader down)') : undefined;
      if (!(await r.cluster.signal(id, 'SIGKILL'))) {
        note(`${id} was not running`);
      } else {
        const at = Date.now();
        // Listed after the kill: the dead worker's disk no longer changes, so no partition that
        // finished in between is missed.
        const lost = lostWith(await finishedPartitions(r, 'shuffle-worker'), new Set([id]));
        await r.disrupt(`shuffle-worker-kill: SIGKILL ${id}`, at, { destroyedPartitions: lost });
        mark(at);
        note(
          `killed ${id}${down?.k ? ` while no leader ran (killed ${down.k.id})` : ''}; ${lost.size} finished partition(s) had no other replica; restart in ${f.restartAfterMs} ms`,
        );
        r.restartShuffleWorker(id, f.restartAfterMs);
      }
      if (down) await bringLeaderBack(r, down);
      return;
    }
    case 'shuffle-worker-partition-damage': {
      const candidates = await finishedPartitions(r, 'shuffle-worker');
      if (candidates.length === 0) return note('no finished partition on any shuffle worker');
      const victim = candidates[Math.min(candidates.length - 1, Math.floor(f.pickFraction * candidates.length))]!;
      const down = f.duringFailover
        ? await takeLeaderDown(r, 'shuffle-worker-partition-damage (leader down)')
        : undefined;
      const data = join(victim.dir, 'data');
      const size = await stat(data).then(
        (s) => s.size,
        () => -1,
      );
      const where = `${victim.holderId}:${victim.name}/data`;
      if (size <= 0) {
        note(`${where} was already gone or empty`);
      } else {
        let what: string;
        if (f.damage === 'delete') {
          await rm(data, { force: true });
          what = 'deleted';
        } else {
          const pos = Math.min(size - 1, Math.floor(f.positionFraction * size));
          const fh = await open(data, 'r+');
          try {
            const b = Buffer.alloc(1);
            await fh.read(b, 0, 1, pos);
            b[0] = b[0]! ^ 0x10;
            await fh.write(b, 0, 1, pos);
          } finally {
            await fh.close();
          }
          what = `byte ${pos} of ${size} flipped`;
        }
        const at = down?.k?.at ?? Date.now();
        mark(at);
        // A replica may serve the read instead; whether or not it does, the producer may rerun.
        const destroyed = new Set([victim.key]);
        if (down?.k) r.amend(down.k.disruption, { ...down.k.disruption, destroyedPartitions: destroyed });
        else await r.disrupt(`shuffle-worker-partition-damage: ${where}`, at, { destroyedPartitions: destroyed });
        note(`${where}: ${what}${down?.k ? ` while no leader ran (killed ${down.k.id})` : ''}`);
      }
      if (down) await bringLeaderBack(r, down);
      return;
    }
  }
}
