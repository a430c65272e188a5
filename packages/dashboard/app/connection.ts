import { getJson, type ClusterDoc } from './api.js';

export interface ConnState {
  readonly kind: 'connecting' | 'live' | 'reconnecting';
  /** The JobMaster whose stream is open (live) or that was last tried. */
  readonly url: string | undefined;
  readonly detail: string;
}

type Listener = (event: string, data: unknown) => void;

const STREAM_EVENTS = ['cluster', 'jobs', 'job', 'recoveries', 'end'];

/**
 * The page's link to the cluster: the live stream of whichever JobMaster leads. It knows every
 * JobMaster's URL (from /cluster), so when the leader dies (the stream breaks) it asks the others
 * who leads now and reconnects there, without a reload. Standbys answer /cluster from the HA
 * directory, so the page learns about the new leader (and its epoch) as soon as one is elected.
 */
export class LiveConnection {
  private readonly urls = new Set<string>();
  private preferred: string | undefined;
  private es: EventSource | undefined;
  private closed = false;
  private connecting = false;
  private jobId: string | undefined;

  constructor(
    origin: string,
    private readonly onEvent: Listener,
    private readonly onState: (s: ConnState) => void,
    private readonly retryMs = 500,
  ) {
    this.urls.add(origin);
  }

  knownUrls(): string[] {
    return [...this.urls];
  }

  /** The JobMaster to read from now (the live stream's, else any known one). */
  currentUrl(): string {
    return this.preferred ?? [...this.urls][0]!;
  }

  setJob(jobId: string | undefined): void {
    if (jobId === this.jobId) return;
    this.jobId = jobId;
    this.restart();
  }

  start(): void {
    void this.connect('connecting');
  }

  close(): void {
    this.closed = true;
    this.es?.close();
  }

  private restart(): void {
    this.es?.close();
    this.es = undefined;
    void this.connect('connecting');
  }

  learn(doc: ClusterDoc): void {
    for (const jm of doc.jobmasters) if (jm.restUrl) this.urls.add(jm.restUrl);
    if (doc.leader?.restUrl) this.urls.add(doc.leader.restUrl);
  }

  private async findLeader(): Promise<string | undefined> {
    const order = [...(this.preferred ? [this.preferred] : []), ...[...this.urls].filter((u) => u !== this.preferred)];
    for (const url of order) {
      try {
        const doc = await getJson<ClusterDoc>(`${url}/cluster`, 2000);
        this.learn(doc);
        this.onEvent('cluster', doc);
        if (doc.answeredBy.leader) return url;
        if (doc.leader?.restUrl && doc.leader.restUrl !== url) {
          // Ask the named leader itself: leader.json keeps naming a dead leader until a standby takes over.
          const l = await getJson<ClusterDoc>(`${doc.leader.restUrl}/cluster`, 2000).catch(() => undefined);
          if (l?.answeredBy.leader) {
            this.learn(l);
            this.onEvent('cluster', l);
            return doc.leader.restUrl;
          }
        }
      } catch {
        // this JobMaster is down or slow: try the next one
      }
    }
    return undefined;
  }

  private async connect(kind: ConnState['kind']): Promise<void> {
    if (this.closed || this.connecting) return;
    this.connecting = true;
    try {
      for (let attempt = 0; !this.closed; attempt++) {
        this.onState({
          kind,
          url: this.preferred,
          detail: attempt === 0 ? 'looking for the leader' : `no leader reachable yet (attempt ${attempt + 1})`,
        });
        const url = await this.findLeader();
        if (url && this.open(url)) return;
        await new Promise((r) => setTimeout(r, this.retryMs));
      }
    } finally {
      this.connecting = false;
    }
  }

  private open(url: string): boolean {
    this.es?.close();
    this.preferred = url;
    const es = new EventSource(`${url}/stream${this.jobId ? `?job=${this.jobId}` : ''}`, { withCredentials: true });
    this.es = es;
    const broken = (why: string): void => {
      if (this.es !== es) return;
      es.close();
      this.es = undefined;
      this.onState({ kind: 'reconnecting', url, detail: why });
      void this.connect('reconnecting');
    };
    for (const name of STREAM_EVENTS) {
      es.addEventListener(name, (ev) => {
        if (this.es !== es) return;
        const data = JSON.parse((ev as MessageEvent<string>).data) as unknown;
        if (name === 'end') return broken('the JobMaster lost its leadership');
        if (name === 'cluster') this.learn(data as ClusterDoc);
        this.onState({ kind: 'live', url, detail: 'live' });
        this.onEvent(name, data);
      });
    }
    es.onerror = () => broken(`lost the stream of ${url}`);
    return true;
  }
}
