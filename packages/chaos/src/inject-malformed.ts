import type { FaultPlan } from './faults.js';
import { targetTaskManager } from './inject-forged-rpc.js';
import type { FaultHooks } from './inject-hostile.js';
import {
  MALFORMED_GRPC,
  MALFORMED_HTTP,
  sendMalformedGrpc,
  sendMalformedHttp,
  type MalformedOutcome,
} from './malformed-credentials.js';
import type { RunContext } from './run-context.js';

type Of<K extends FaultPlan['kind']> = Extract<FaultPlan, { kind: K }>;

/** A REST path that needs credentials and changes nothing. */
const PROTECTED_PATH = '/cluster';

/**
 * The malformed-credentials fault: every value of src/malformed-credentials.ts to the leader's
 * Dispatcher and REST API and to a TaskManager's gateway (a CancelTask of a task it runs), all
 * mid-job. Each must be refused (an answer is `forgery-accepted`; an error other than a refusal,
 * a timeout or a daemon that died or restarted is `not-contained`), and as for forged calls the
 * verdict checks that nothing was canceled or rerun because of them (runner.ts).
 */
export async function injectMalformedCredentials(
  r: RunContext,
  f: Of<'malformed-credentials'>,
  h: FaultHooks,
): Promise<void> {
  const leader = await r.cluster.leader();
  if (!leader || !(await r.cluster.isAlive(leader.jobmasterId))) return h.note('no live leader to send to');
  const jm = await r.cluster.process(leader.jobmasterId);
  const { tm, running } = await targetTaskManager(r, `tm-${f.taskManager}`);
  if (!tm) return h.note('no live TaskManager to send to');
  const targets = [jm, tm];
  const pids = new Map(targets.map((p) => [p.id, p.pid]));
  const security = r.cluster.security();
  const secret = (security.httpHeaders().authorization ?? '').replace(/^Bearer /, '');
  const inputs = { secret };
  const at = Date.now();
  const label = `malformed-credentials: to ${jm.id} (epoch ${leader.epoch}) and ${tm.id}`;
  await r.disrupt(label, at);
  r.forgeries.push({ at, label, leaderEpoch: leader.epoch });

  const results: { name: string; outcome: MalformedOutcome }[] = [];
  const judge = (name: string, o: MalformedOutcome): void => {
    results.push({ name, outcome: o });
    if (o.outcome === 'accepted') r.problem('forgery-accepted', `${name}: accepted (${o.detail}); must be refused`);
    if (o.outcome === 'broken') r.problem('not-contained', `${name}: ${o.detail}; must be refused as unauthenticated`);
  };
  for (const m of MALFORMED_GRPC) {
    judge(
      `gRPC ListJobs to ${jm.id} with ${m.name}`,
      await sendMalformedGrpc(m, inputs, { to: 'leader', address: jm.address }, security),
    );
    if (running)
      judge(
        `gRPC CancelTask of ${running.vertex_id}#${running.subtask} to ${tm.id} with ${m.name}`,
        await sendMalformedGrpc(
          m,
          inputs,
          { to: 'taskmanager', address: tm.address, epoch: leader.epoch, execution: running },
          security,
        ),
      );
  }
  if (jm.restUrl) {
    for (const m of MALFORMED_HTTP)
      judge(
        `GET ${PROTECTED_PATH} of ${jm.id} with ${m.name}`,
        await sendMalformedHttp(m, inputs, jm.restUrl, PROTECTED_PATH),
      );
  } else {
    h.note(`${jm.id} has no REST URL: HTTP values not sent`);
  }
  // Refused without harm: each target still runs, as the same process.
  for (const p of targets) {
    const now = await r.cluster.process(p.id).catch(() => undefined);
    if (!(await r.cluster.isAlive(p.id)) || now?.pid !== pids.get(p.id))
      r.problem(
        'not-contained',
        `${p.id} (pid ${pids.get(p.id)}) is no longer running after the malformed credentials`,
      );
  }
  const reached = results.filter((x) => x.outcome.outcome !== 'unreachable').length;
  if (reached > 0 && running) h.mark(at);
  else h.note(`not injected: ${running ? 'no value reached a daemon' : 'no running task of the job was found'}`);
  h.note(
    `${reached} of ${results.length} malformed credentials reached ${jm.id}/${tm.id}; ` +
      `${results.filter((x) => x.outcome.outcome === 'refused').length} refused`,
  );
}
