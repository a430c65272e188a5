import { open, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, sleep } from '@rebound/core';
import { dumpJobEvents } from '@rebound/event-store';
import { HEARTBEAT_TIMEOUT_MS, PAUSE_REGISTRATION_TIMEOUT_MS, START_TIMEOUT_MS } from './config.js';
import { NO_CRASH_POINTS, type FaultPlan } from './faults.js';
import type { FaultRecord } from './results.js';
import { finishedInDump, type RunContext } from './run-context.js';
import { finishedPartitions, waitUntil } from './observe.js';
import { injectForgedRpc } from './inject-forged-rpc.js';
import { injectDamagedJobDir } from './inject-hostile.js';
import { injectNetworkFault } from './inject-network.js';
import { injectMalformedCredentials } from './inject-malformed.js';
import { injectPoisonJob, injectPoisonRuntime } from './inject-poison.js';
import { injectShuffleFault } from './inject-shuffle.js';

/**
 * Injects one planned fault: waits for its trigger, does it, records the disruptions (with the
 * event log as it is right after), restarts what it killed, and waits until the job runs again.
 */
export async function injectFault(r: RunContext, f: FaultPlan, rec: FaultRecord, baseline: number): Promise<void> {
  const note = (s: string): void => {
    rec.notes.push(s);
    r.log(`${f.kind}: ${s}`);
  };
  // Called only after the fault's distinctive step happened (the standby died in RECONCILING,
  // the TaskManager was killed, the event file was damaged, ...), never at its first step.
  const mark = (at: number): void => {
    rec.injected = true;
    rec.atMs = at - r.submittedAt;
  };
  if (f.kind === 'crash-point') {
    // Armed from the start in jm-1; wait for it to die (or the job to end without it).
    const jm1 = await r.cluster.process('jm-1');
    const died = await waitUntil(
      async () => !(await r.cluster.isAlive('jm-1')),
      () => r.monitor.terminal !== undefined,
      r.opts.deadlineMs,
    );
    if (!died) {
      note('the crash point was not reached before the job ended');
      return;
    }
    const at = Date.now();
    mark(at);
    r.jmDisturbed.push({ id: 'jm-1', at });
    const epoch = [...r.monitor.epochChanges].reverse().find((c) => c.jobmasterId === 'jm-1')?.epoch ?? 0;
    r.leaderLosses.push({ at, epoch });
    await r.disrupt(`crash-point: jm-1 (pid ${jm1.pid}) died`, at);
    note(`jm-1 died at its crash point ${rec.description}`);
    r.restartJobMaster('jm-1');
    await r.awaitRecovery(epoch);
    return;
  }
  // Its second job is submitted at once, so that it has finished by the trigger.
  if (f.kind === 'damaged-job-dir') return injectDamagedJobDir(r, f, baseline, { note, mark });
  if (!(await r.awaitTrigger(baseline, f.trigger))) {
    note('the job ended before the trigger');
    return;
  }
  switch (f.kind) {
    case 'poison-job':
      return injectPoisonJob(r, f, { note, mark });
    case 'poison-runtime':
      return injectPoisonRuntime(r, f, { note, mark });
    case 'forged-rpc':
      return injectForgedRpc(r, f, { note, mark });
    case 'malformed-credentials':
      return injectMalformedCredentials(r, f, { note, mark });
    case 'tm-partition':
    case 'leader-partition':
    case 'etcd-member-kill':
    case 'etcd-outage':
    case 'etcd-leader-partition':
      return injectNetworkFault(r, f, { note, mark });
    case 'leader-and-tm-kill':
    case 'shuffle-worker-kill':
    case 'shuffle-worker-partition-damage':
      return injectShuffleFault(r, f, { note, mark });
    case 'leader-kill': {
      const k = await r.killLeader('leader-kill');
      if (!k) return note('no live leader to kill');
      mark(k.at);
      r.restartJobMaster(k.id);
      await r.awaitRecovery(k.epoch);
      return;
    }
    case 'double-failure': {
      const k = await r.killLeader('double-failure #1');
      if (!k) return note('no live leader to kill');
      // jm-2 was started with debug.crash.during-reconciling: it takes over and dies in RECONCILING.
      const standby = (await r.aliveJobMasters())[0];
      if (!standby) return note('no standby left');
      const died = await waitUntil(
        async () => !(await r.cluster.isAlive(standby)),
        () =>
          r.monitor.terminal !== undefined ||
          r.monitor.samples.some((s) => s.t > k.at && s.state === 'RUNNING' && (s.epoch ?? 0) > k.epoch),
        60_000,
      );
      // Dead, and at its crash point: a standby that died otherwise is no double failure in RECONCILING.
      const inReconciling = died && /crash point reached: during RECONCILING/.test(await r.cluster.log(standby));
      if (died && !inReconciling) note(`${standby} died, but not at its RECONCILING crash point`);
      if (inReconciling) {
        mark(k.at);
        const at = Date.now();
        const leader = await r.cluster.leader();
        r.jmDisturbed.push({ id: standby, at });
        r.leaderLosses.push({ at, epoch: leader?.jobmasterId === standby ? leader.epoch : k.epoch });
        await r.disrupt(`double-failure #2: ${standby} died while RECONCILING`, at);
        note(`${standby} died in RECONCILING`);
        r.restartJobMaster(k.id);
        r.restartJobMaster(standby);
        await r.awaitRecovery(leader?.epoch ?? k.epoch);
      } else {
        if (!died) note(`${standby} took over without reaching RECONCILING (no events recorded yet?)`);
        r.restartJobMaster(k.id);
        if (died) r.restartJobMaster(standby);
      }
      return;
    }
    case 'tm-kill-leaderless': {
      const leader = await r.cluster.leader();
      const standbys = (await r.aliveJobMasters()).filter((id) => id !== leader?.jobmasterId);
      await r.stopJobMasters(standbys);
      const k = await r.killLeader('tm-kill-leaderless');
      if (!k) {
        await r.contJobMasters(standbys);
        return note('no live leader to kill');
      }
      const tm = `tm-${f.taskManager}`;
      if (await r.killTaskManager(tm, 'tm-kill-leaderless (no leader)')) {
        mark(k.at);
        r.restartTaskManager(tm);
      } else {
        note(`${tm} was not running: only the leader was killed`);
      }
      await r.contJobMasters(standbys);
      r.restartJobMaster(k.id);
      await r.awaitRecovery(k.epoch);
      return;
    }
    case 'tm-kill-after-recovery': {
      const k = await r.killLeader('tm-kill-after-recovery');
      if (!k) return note('no live leader to kill');
      r.restartJobMaster(k.id);
      if (!(await r.awaitRecovery(k.epoch)) || r.monitor.terminal) return note('the job ended before it ran again');
      await sleep(f.afterRecoveryMs);
      if (r.monitor.terminal) return note('the job ended before the TaskManager kill');
      const tm = `tm-${f.taskManager}`;
      if (await r.killTaskManager(tm, 'tm-kill-after-recovery')) {
        mark(Date.now());
        r.restartTaskManager(tm);
      } else {
        note(`${tm} was not running: only the leader was killed`);
      }
      return;
    }
    case 'leader-pause': {
      const leader = await r.cluster.leader();
      if (!leader || !(await r.cluster.isAlive(leader.jobmasterId))) return note('no live leader to pause');
      await r.cluster.signal(leader.jobmasterId, 'SIGSTOP');
      const at = Date.now();
      mark(at);
      r.jmDisturbed.push({ id: leader.jobmasterId, at });
      r.leaderLosses.push({ at, epoch: leader.epoch });
      await r.disrupt(`leader-pause: SIGSTOP ${leader.jobmasterId} (epoch ${leader.epoch})`, at);
      const recovered = await r.awaitRecovery(leader.epoch);
      if (recovered && !r.monitor.terminal) await sleep(f.resumeAfterMs);
      await r.cluster.signal(leader.jobmasterId, 'SIGCONT');
      const resumedAt = Date.now();
      r.fencingChecks.push({ epoch: leader.epoch, resumedAt, id: leader.jobmasterId });
      note(
        `${leader.jobmasterId} resumed ${resumedAt - at} ms after it was stopped${recovered ? '' : ' (no new leader ran the job meanwhile)'}`,
      );
      return;
    }
    case 'torn-tail':
    case 'flipped-byte': {
      const leader = await r.cluster.leader();
      const alive = await r.aliveJobMasters();
      const standbys = alive.filter((id) => id !== leader?.jobmasterId);
      await r.stopJobMasters(standbys);
      const k = await r.killLeader(`${f.kind} (all JobMasters down)`);
      for (const id of standbys) await r.cluster.signal(id, 'SIGKILL');
      if (!k) {
        for (const id of standbys) r.restartJobMaster(id);
        return note('no live leader to kill');
      }
      const file = await r.newestEventFile();
      let corrupted = false;
      if (!file) {
        note('no event file to damage yet: only the JobMasters were killed');
      } else {
        const size = (await stat(file)).size;
        if (f.kind === 'torn-tail') {
          const before = await dumpJobEvents(r.cluster.haDir, r.jobId);
          const name = file.slice(file.lastIndexOf('/') + 1);
          const lastOffset = Math.max(0, ...before.events.filter((e) => e.file === name).map((e) => e.offset));
          let cut = lastOffset + Math.floor(f.cutFraction * (size - lastOffset));
          if (cut >= size) cut = size - 1;
          if (f.mode === 'truncate') {
            await truncate(file, cut);
          } else {
            const fh = await open(file, 'r+');
            try {
              await fh.write(Buffer.alloc(size - cut), 0, size - cut, cut);
            } finally {
              await fh.close();
            }
          }
          note(
            `${name}: ${f.mode === 'truncate' ? 'truncated' : 'zero-filled'} from offset ${cut} of ${size} (last record at ${lastOffset})`,
          );
        } else {
          const pos = Math.min(size - 1, Math.floor(f.positionFraction * size));
          const fh = await open(file, 'r+');
          try {
            const b = Buffer.alloc(1);
            await fh.read(b, 0, 1, pos);
            b[0] = b[0]! ^ (1 << f.bit);
            await fh.write(b, 0, 1, pos);
          } finally {
            await fh.close();
          }
          note(`${file.slice(file.lastIndexOf('/') + 1)}: flipped bit ${f.bit} of byte ${pos} of ${size}`);
        }
        mark(k.at);
        const after = await dumpJobEvents(r.cluster.haDir, r.jobId);
        corrupted = after.summary.corruption !== undefined;
        if (corrupted) note(`the damaged log reads as corrupt: ${after.summary.corruption!.message}`);
        // What is durable now is what survived the damage.
        r.amend(k.disruption, {
          at: k.at,
          label: `${f.kind}: all JobMasters killed, newest event file damaged`,
          durableFinished: finishedInDump(after),
          ...(corrupted ? { logCorrupted: true } : {}),
        });
      }
      // One JobMaster first (it replays the damaged log), then the others as standbys.
      try {
        await r.cluster.startJobMaster({ id: k.id, config: NO_CRASH_POINTS, timeoutMs: START_TIMEOUT_MS });
      } catch (err) {
        r.problem('harness-error', `restarting ${k.id}: ${errorMessage(err)}`);
      }
      for (const id of standbys) r.restartJobMaster(id);
      await r.awaitRecovery(k.epoch);
      return;
    }
    case 'partition-delete': {
      const candidates = await finishedPartitions(r);
      if (candidates.length === 0) return note('no finished partition on disk');
      const victim = candidates[Math.min(candidates.length - 1, Math.floor(f.pickFraction * candidates.length))]!;
      let k: Awaited<ReturnType<RunContext['killLeader']>>;
      let standbys: string[] = [];
      if (f.duringFailover) {
        const leader = await r.cluster.leader();
        standbys = (await r.aliveJobMasters()).filter((id) => id !== leader?.jobmasterId);
        await r.stopJobMasters(standbys);
        k = await r.killLeader('partition-delete (leader down)');
      }
      const existed = await stat(join(victim.dir, 'data')).then(
        () => true,
        () => false,
      );
      await rm(join(victim.dir, 'data'), { force: true });
      const at = k?.at ?? Date.now();
      if (existed) mark(at);
      else note(`${victim.holderId}:${victim.name}/data was already gone`);
      const destroyed = new Set([victim.key]);
      if (k) {
        // The leader's disruption gets the deleted partition.
        r.amend(k.disruption, { ...k.disruption, destroyedPartitions: destroyed });
      } else {
        await r.disrupt(`partition-delete: ${victim.holderId}:${victim.name}`, at, {
          destroyedPartitions: destroyed,
        });
      }
      note(`deleted ${victim.holderId}:${victim.name}/data${k ? ` while no leader ran (killed ${k.id})` : ''}`);
      if (k) {
        await r.contJobMasters(standbys);
        r.restartJobMaster(k.id);
        await r.awaitRecovery(k.epoch);
      }
      return;
    }
    case 'jobmasters-pause': {
      const alive = await r.aliveJobMasters();
      const leader = await r.cluster.leader();
      await r.stopJobMasters(alive);
      const at = Date.now();
      mark(at);
      if (leader) r.leaderLosses.push({ at, epoch: leader.epoch });
      const d = await r.disrupt(`jobmasters-pause: SIGSTOP ${alive.join(', ')}`, at);
      await sleep(HEARTBEAT_TIMEOUT_MS + PAUSE_REGISTRATION_TIMEOUT_MS + 1_500 + f.extraMs);
      const released = new Set<string>();
      for (const p of await r.cluster.processes()) {
        if (p.role !== 'taskmanager') continue;
        const events = (await r.cluster.log(p.id))
          .split('\n')
          .filter((l) => l.includes('no leader took the retained partitions in time'));
        if (events.some((l) => l.includes(r.jobId) && Number((JSON.parse(l) as { time?: number }).time ?? 0) >= at))
          released.add(p.id);
      }
      r.amend(d, { ...d, releasedOn: released });
      await r.contJobMasters(alive);
      note(
        `all JobMasters stopped for ${Date.now() - at} ms; retained partitions released on ${released.size > 0 ? [...released].join(', ') : 'no TaskManager'}`,
      );
      if (leader) await r.awaitRecovery(leader.epoch - 1);
      return;
    }
  }
}
