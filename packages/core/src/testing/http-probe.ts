import { connect } from 'node:net';

/**
 * HTTP probes for the servers' hardening tests (REST, metrics): what status a request gets,
 * including requests no HTTP client would send.
 */

/** A request with headers fetch accepts (it refuses CR, LF and NUL itself); undefined if refused. */
export async function httpStatus(url: string, init: RequestInit = {}): Promise<number | undefined> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    if (err instanceof TypeError && !/fetch failed/.test(err.message)) return undefined;
    throw err;
  }
  await res.body?.cancel();
  return res.status;
}

/**
 * Sends raw bytes and returns the status code of the first response line (0: closed with none).
 * `encoding`: latin1 sends each character as one byte (any byte value); utf8 sends text as text.
 */
export function rawHttpStatus(port: number, request: string, encoding: BufferEncoding = 'utf8'): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${JSON.stringify(request.slice(0, 60))}`));
    }, 10_000);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    });
    socket.write(request, encoding);
  });
}
