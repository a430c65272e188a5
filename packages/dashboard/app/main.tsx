import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  fmtBytes,
  fmtMs,
  fmtTime,
  getJson,
  type ClusterDoc,
  type EventsDoc,
  type JobDoc,
  type JobOverview,
  type RecoveriesDoc,
} from './api.js';
import { LiveConnection, type ConnState } from './connection.js';
import { Dag } from './dag.jsx';
import { RecoveryTimeline } from './timeline.jsx';

// The server exchanged the ?token= of the printed link for a session cookie when it served this
// page: the secret leaves the address bar, the history and any bookmark at once.
{
  const url = new URL(location.href);
  if (url.searchParams.has('token')) {
    url.searchParams.delete('token');
    history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
  }
}

function route(): { jobId: string | undefined } {
  const m = /^#\/jobs\/([0-9a-f]{32})/.exec(location.hash);
  return { jobId: m?.[1] };
}

function State({ s }: { s: string }) {
  return <span class={`state ${s}`}>{s}</span>;
}

function Progress({ done, total }: { done: number; total: number }) {
  return (
    <div class="bar" title={`${done}/${total}`}>
      <span style={{ width: `${total > 0 ? (100 * done) / total : 0}%` }} />
    </div>
  );
}

function ClusterCards({ cluster }: { cluster: ClusterDoc | undefined }) {
  if (!cluster) return null;
  return (
    <div class="grid2">
      <div class="card">
        <h2>JobMasters</h2>
        <table>
          <thead>
            <tr>
              <th>ID</th>
              <th>ROLE</th>
              <th>ALIVE</th>
              <th>REST</th>
            </tr>
          </thead>
          <tbody>
            {cluster.jobmasters.map((jm) => (
              <tr key={jm.id} data-testid="jobmaster-row">
                <td class="mono">{jm.id}</td>
                <td>{jm.leader ? <b>leader (epoch {cluster.leader?.epoch})</b> : 'standby'}</td>
                <td>{jm.alive === null ? '?' : jm.alive ? 'yes' : <span class="FAILED">no</span>}</td>
                <td class="mono">
                  {/* The server skips other URLs already; a link is never anything but http(s). */}
                  {jm.restUrl && /^https?:\/\//.test(jm.restUrl) ? <a href={`${jm.restUrl}/`}>{jm.restUrl}</a> : '-'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="card">
        <h2>TaskManagers</h2>
        <table>
          <thead>
            <tr>
              <th>ID</th>
              <th>SLOTS</th>
              <th></th>
              <th>PARTITIONS</th>
              <th>HEARTBEAT</th>
            </tr>
          </thead>
          <tbody>
            {cluster.taskmanagers.map((tm) => (
              <tr key={tm.id} data-testid="taskmanager-row">
                <td class="mono">{tm.id}</td>
                <td>
                  {tm.registered === false ? (
                    <span class="muted">not registered</span>
                  ) : (
                    `${tm.slotsTotal - tm.slotsFree}/${tm.slotsTotal} busy`
                  )}
                </td>
                <td>
                  <Progress done={tm.slotsTotal - tm.slotsFree} total={tm.slotsTotal} />
                </td>
                <td>
                  {tm.partitions} ({fmtBytes(tm.partitionBytes)})
                  {tm.retainedJobs.length ? ` · kept for ${tm.retainedJobs.length} job(s)` : ''}
                </td>
                <td class="mono">{tm.lastHeartbeatMs ? fmtTime(tm.lastHeartbeatMs) : '-'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {cluster.shuffleWorkers?.length ? (
        <div class="card">
          <h2>Shuffle workers</h2>
          <table>
            <thead>
              <tr>
                <th>ID</th>
                <th>STATE</th>
                <th>PARTITIONS</th>
                <th>HEARTBEAT</th>
              </tr>
            </thead>
            <tbody>
              {cluster.shuffleWorkers.map((w) => (
                <tr key={w.id} data-testid="shuffle-worker-row">
                  <td class="mono">{w.id}</td>
                  <td>
                    {/* A dead worker is gone, whether or not the leader has dropped it yet. */}
                    {w.alive === false ? (
                      <span class="FAILED">gone</span>
                    ) : w.registered === false ? (
                      <span class="muted">not registered</span>
                    ) : (
                      'registered'
                    )}
                  </td>
                  <td>
                    {w.partitions} ({fmtBytes(w.partitionBytes)})
                  </td>
                  <td class="mono">{w.lastHeartbeatMs ? fmtTime(w.lastHeartbeatMs) : '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

function JobList({ jobs }: { jobs: JobOverview[] }) {
  return (
    <div class="card">
      <h2>Jobs</h2>
      {jobs.length === 0 ? (
        <p class="muted">
          No jobs yet: submit one with <span class="mono">rebound submit</span>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>NAME</th>
              <th>JOB ID</th>
              <th>STATE</th>
              <th>TASKS</th>
              <th></th>
              <th>STARTED</th>
              <th>DURATION</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((j) => (
              <tr key={j.jid} data-testid="job-row">
                <td>
                  <a href={`#/jobs/${j.jid}`}>{j.name}</a>
                </td>
                <td class="mono">{j.jid}</td>
                <td>
                  <State s={j.state} />
                </td>
                <td>
                  {j.tasks.finished}/{j.tasks.total}
                </td>
                <td>
                  <Progress done={j.tasks.finished} total={j.tasks.total} />
                </td>
                <td class="mono">{fmtTime(j['start-time'])}</td>
                <td>{fmtMs(j.duration)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function EventLog({ conn, jobId, version }: { conn: LiveConnection; jobId: string; version: string }) {
  const [offset, setOffset] = useState(0);
  const [doc, setDoc] = useState<EventsDoc | undefined>();
  const [error, setError] = useState('');
  const limit = 25;
  const last = useRef(0);
  useEffect(() => {
    // Follows the job's progress, at most every two seconds; any JobMaster can answer (read from disk).
    const wait = Math.max(0, 2000 - (Date.now() - last.current));
    const t = setTimeout(() => {
      last.current = Date.now();
      getJson<EventsDoc>(`${conn.currentUrl()}/jobs/${jobId}/events?offset=${offset}&limit=${limit}`)
        .then((d) => (setDoc(d), setError('')))
        .catch((e: Error) => setError(e.message));
    }, wait);
    return () => clearTimeout(t);
  }, [jobId, offset, version]);
  return (
    <div class="card">
      <h2>Event log {doc ? <span class="muted">({doc.total} events)</span> : null}</h2>
      {error && <p class="FAILED">{error}</p>}
      {doc && doc.total === 0 && (
        <p class="muted">
          No events (job recovery disabled, nothing finished yet, or the job ended and its log was cleared).
        </p>
      )}
      {doc && doc.events.length > 0 && (
        <table>
          <tbody>
            {doc.events.map((e) => (
              <tr key={e.index}>
                <td class="mono wrap">{e.line}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {doc && doc.total > limit && (
        <div class="kv" style="margin-top:6px">
          <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>
            previous
          </button>
          <span class="muted">
            {offset + 1}–{Math.min(doc.total, offset + limit)} of {doc.total}
          </span>
          <button disabled={offset + limit >= doc.total} onClick={() => setOffset(offset + limit)}>
            next
          </button>
        </div>
      )}
    </div>
  );
}

function JobPage({
  conn,
  job,
  recoveries,
  jobId,
  cluster,
}: {
  conn: LiveConnection;
  job: JobDoc | undefined;
  recoveries: RecoveriesDoc | undefined;
  jobId: string;
  cluster: ClusterDoc | undefined;
}) {
  if (!job || job.jid !== jobId) return <div class="card">Loading job {jobId}…</div>;
  const c = job['status-counts'];
  const total = Object.values(c).reduce((a, b) => a + b, 0);
  return (
    <>
      <div class="card">
        <h2>
          {job.name} <State s={job.state} />
        </h2>
        <div class="kv">
          <span class="mono">{job.jid}</span>
          <span>
            tasks{' '}
            <b>
              {c.FINISHED ?? 0}/{total}
            </b>{' '}
            finished, {c.RUNNING ?? 0} running
          </span>
          <span>
            led by epoch <b data-testid="job-epoch">{job.rebound.leaderEpoch}</b>
          </span>
          <span>restarts {job.rebound.restarts}</span>
          <span>duration {fmtMs(job.duration)}</span>
        </div>
        {job.rebound.failure && <p class="FAILED">{job.rebound.failure}</p>}
        {job.rebound.notes.map((n) => (
          <p class="muted" key={n}>
            {n}
          </p>
        ))}
      </div>
      <div class="card" style="overflow:auto">
        <h2>Dataflow</h2>
        <Dag job={job} />
      </div>
      <div class="card">
        <h2>JobMaster failovers</h2>
        <RecoveryTimeline doc={recoveries?.jid === jobId ? recoveries : undefined} />
      </div>
      <ClusterCards cluster={cluster} />
      <EventLog conn={conn} jobId={jobId} version={`${c.FINISHED}-${job.state}-${job.rebound.leaderEpoch}`} />
    </>
  );
}

function App() {
  const [r, setRoute] = useState(route());
  const [cluster, setCluster] = useState<ClusterDoc | undefined>();
  const [jobs, setJobs] = useState<JobOverview[]>([]);
  const [job, setJob] = useState<JobDoc | undefined>();
  const [recoveries, setRecoveries] = useState<RecoveriesDoc | undefined>();
  const [conn, setConn] = useState<ConnState>({ kind: 'connecting', url: undefined, detail: '' });
  const connection = useMemo(
    () =>
      new LiveConnection(
        location.origin,
        (event, data) => {
          if (event === 'cluster') setCluster(data as ClusterDoc);
          else if (event === 'jobs') setJobs((data as { jobs: JobOverview[] }).jobs);
          else if (event === 'job') setJob(data as JobDoc);
          else if (event === 'recoveries') setRecoveries(data as RecoveriesDoc);
        },
        setConn,
      ),
    [],
  );
  useEffect(() => {
    const onHash = () => setRoute(route());
    window.addEventListener('hashchange', onHash);
    connection.setJob(route().jobId);
    connection.start();
    return () => {
      window.removeEventListener('hashchange', onHash);
      connection.close();
    };
  }, []);
  useEffect(() => connection.setJob(r.jobId), [r.jobId]);
  const leader = cluster?.leader;
  return (
    <>
      <header>
        <a href="#/">Rebound</a>
        <span data-testid="leader">
          leader {leader ? <b>{leader.jobmasterId}</b> : 'none'} · epoch{' '}
          <b data-testid="leader-epoch">{cluster?.epoch ?? 0}</b>
        </span>
        <span
          class={`pill ${conn.kind === 'live' ? 'live' : conn.kind === 'reconnecting' ? 'down' : 'wait'}`}
          data-testid="connection"
          title={conn.detail}
        >
          {conn.kind === 'live' ? `live · ${conn.url}` : `${conn.kind}… ${conn.detail}`}
        </span>
        {cluster && (
          <span class="pill">
            {cluster.taskmanagers.length} TaskManagers ·{' '}
            {cluster.taskmanagers.reduce((s, t) => s + t.slotsTotal - t.slotsFree, 0)}/
            {cluster.taskmanagers.reduce((s, t) => s + t.slotsTotal, 0)} slots busy
          </span>
        )}
      </header>
      <main>
        {r.jobId ? (
          <JobPage conn={connection} job={job} recoveries={recoveries} jobId={r.jobId} cluster={cluster} />
        ) : (
          <>
            <JobList jobs={jobs} />
            <ClusterCards cluster={cluster} />
          </>
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.textContent = '';
render(<App />, root);
