import { connect } from 'node:net';
import { waitFor } from './harness.js';

export interface HttpResult<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

/** Headers every request of a suite sends: the cluster secret (`useCredentials`). */
let credentials: Record<string, string> = {};

/** Sends `headers` (e.g. `cluster.security().httpHeaders()`) with every later request; `{}` for none. */
export function useCredentials(headers: Record<string, string>): void {
  credentials = headers;
}

/** A JSON request to a REST URL (loopback only), with a deadline. */
export async function http<T = unknown>(
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
): Promise<HttpResult<T>> {
  const headers = { ...credentials, ...(init.headers as Record<string, string> | undefined) };
  const res = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(init.timeoutMs ?? 10_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: the test says so when it matters
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
}

/** Reads a Server-Sent Events stream into `events` until closed or aborted. */
export class SseClient {
  readonly events: SseEvent[] = [];
  ended = false;
  private readonly abort = new AbortController();

  constructor(readonly url: string) {
    void this.run();
  }

  private async run(): Promise<void> {
    try {
      const res = await fetch(this.url, {
        signal: this.abort.signal,
        headers: { ...credentials, accept: 'text/event-stream' },
      });
      if (!res.body) return;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) this.events.push({ event, data: JSON.parse(data) as unknown });
        }
      }
    } catch {
      // aborted or the server died
    } finally {
      this.ended = true;
    }
  }

  async next<T>(event: string, pred: (d: T) => boolean, timeoutMs: number): Promise<T> {
    return waitFor(
      () => this.events.find((e) => e.event === event && pred(e.data as T))?.data as T | undefined,
      timeoutMs,
      `SSE event ${event} from ${this.url}`,
    );
  }

  close(): void {
    this.abort.abort();
  }
}

/** Every documented field is present (Rebound may add fields of its own). */
export function missingFields(obj: unknown, fields: readonly string[]): string[] {
  const o = (obj ?? {}) as Record<string, unknown>;
  return fields.filter((f) => !(f in o));
}

/** Sends a raw HTTP/1.1 request (any Host header) to the server of `baseUrl`; resolves its status. */
export function rawHttpStatus(baseUrl: string, request: string, timeoutMs = 10_000): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${baseUrl} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(request);
  });
}
