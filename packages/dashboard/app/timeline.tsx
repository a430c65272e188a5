import { fmtBytes, fmtMs, fmtTime, type RecoveriesDoc, type RecoveryRow } from './api.js';

/** One failover: old leader last heard → elected → replay → reconcile → running, and what was kept. */
function Row({ r }: { r: RecoveryRow }) {
  const p = r.phases;
  const start = p.oldLeaderLastHeardMs > 0 ? p.oldLeaderLastHeardMs : p.electedAtMs;
  const end = p.runningAtMs > 0 ? p.runningAtMs : Math.max(p.replayFinishedAtMs, p.electedAtMs);
  const span = Math.max(1, end - start);
  const seg = (from: number, to: number) => `${Math.max(2, (Math.max(0, to - from) / span) * 100)}%`;
  return (
    <div class="card" data-testid="recovery-row" data-epoch={r.epoch} style="margin-bottom:8px">
      <div class="kv">
        <span>
          <b>Epoch {r.epoch}</b>
        </span>
        <span>
          {r.restartedFromScratch ? (
            <span class="FAILED">restarted from scratch: {r.reason}</span>
          ) : (
            <span class="FINISHED">recovered (FLIP-383)</span>
          )}
        </span>
        <span>
          total <b>{fmtMs(r.durations.totalMs)}</b> from election to running
        </span>
      </div>
      <div class="timeline" title="detection · election to replay · replay · reconcile">
        {p.oldLeaderLastHeardMs > 0 && (
          <div class="ph-detect" style={{ width: seg(p.oldLeaderLastHeardMs, p.electedAtMs) }}>
            detect {fmtMs(r.durations.detectionMs)}
          </div>
        )}
        <div class="ph-elect" style={{ width: seg(p.electedAtMs, p.replayStartedAtMs) }}>
          elected
        </div>
        <div class="ph-replay" style={{ width: seg(p.replayStartedAtMs, p.replayFinishedAtMs) }}>
          replay {fmtMs(r.durations.replayMs)}
        </div>
        <div class="ph-reconcile" style={{ width: seg(p.reconcileStartedAtMs || p.replayFinishedAtMs, p.runningAtMs) }}>
          reconcile {fmtMs(r.durations.reconcileMs)}
        </div>
      </div>
      <div class="kv muted mono">
        <span>old leader last heard {fmtTime(p.oldLeaderLastHeardMs)}</span>
        <span>elected {fmtTime(p.electedAtMs)}</span>
        <span>
          replay {fmtTime(p.replayStartedAtMs)}–{fmtTime(p.replayFinishedAtMs)}
        </span>
        <span>running {fmtTime(p.runningAtMs)}</span>
      </div>
      <div class="kv" style="margin-top:6px">
        <span>
          tasks reused <b class="FINISHED">{r.tasks.reused}</b>
        </span>
        <span>
          rerun <b class="RECONCILING">{r.tasks.rerun}</b>
        </span>
        <span
          data-testid="recovery-adopted"
          title="running tasks that kept running through the failover (keep-running-tasks)"
        >
          running tasks adopted <b class="RUNNING">{r.tasks.adopted ?? 0}</b>
        </span>
        <span>
          events replayed <b>{r.eventsReplayed}</b>
        </span>
        <span>
          partitions reused <b>{r.partitions.reused}</b> ({fmtBytes(r.partitions.reusedBytes)})
        </span>
        <span>
          released <b>{r.partitions.released}</b> ({fmtBytes(r.partitions.releasedBytes)})
        </span>
        <span>
          missing <b>{r.partitions.missing}</b>
        </span>
        <span>
          torn-tail bytes discarded <b>{fmtBytes(r.tornTailBytesDiscarded)}</b>
        </span>
      </div>
    </div>
  );
}

export function RecoveryTimeline({ doc }: { doc: RecoveriesDoc | undefined }) {
  if (!doc) return <p class="muted">No recovery data yet.</p>;
  return (
    <div>
      {doc.inProgress && (
        <div class="banner" data-testid="recovery-in-progress">
          Recovering under epoch {doc.inProgress.epoch}: elected {fmtTime(doc.inProgress.electedAtMs)}, replaying and
          reconciling…
        </div>
      )}
      {doc.recoveries.length === 0 && !doc.inProgress && (
        <p class="muted">This job has not gone through a JobMaster failover.</p>
      )}
      {[...doc.recoveries].reverse().map((r) => (
        <Row key={`${r.epoch}-${r.phases.electedAtMs}`} r={r} />
      ))}
    </div>
  );
}
