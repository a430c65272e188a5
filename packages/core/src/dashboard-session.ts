import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { cookieValue } from './http-credentials.js';

/** Prefix of the session cookie's name; a tag of the cluster follows (see DashboardSessions). */
export const SESSION_COOKIE_PREFIX = 'rebound_session_';

export interface DashboardSession {
  readonly id: string;
  readonly expiresAtMs: number;
}

/**
 * Dashboard sessions: what a browser holds instead of the cluster secret. The `?token=<secret>`
 * link is exchanged once for a random session id, signed with a key derived from the secret, in
 * an HttpOnly, SameSite=Strict cookie with an expiry. Every JobMaster of the cluster derives the
 * same key, so a standby (or the next leader) accepts a session another one issued; a page of
 * another origin on the same host never sees the secret, and a stolen cookie expires.
 *
 * The cookie's name carries a tag of the cluster: browsers do not separate cookies by port, and
 * two local clusters on 127.0.0.1 must not overwrite each other's session.
 */
export class DashboardSessions {
  private readonly key: Buffer;
  /** Sessions this process issued or accepted, until they expire (what `size` counts). */
  private readonly known = new Map<string, number>();
  readonly cookieName: string;

  constructor(
    clusterSecret: string,
    readonly ttlMs: number,
  ) {
    this.key = createHmac('sha256', clusterSecret).update('rebound dashboard session key v1').digest();
    const tag = createHmac('sha256', clusterSecret).update('rebound dashboard cookie name v1').digest('hex');
    this.cookieName = `${SESSION_COOKIE_PREFIX}${tag.slice(0, 12)}`;
  }

  /** A new session: its cookie value and the Set-Cookie header that stores it. */
  issue(nowMs: number): { value: string; setCookie: string; session: DashboardSession } {
    const id = randomBytes(18).toString('base64url');
    const expiresAtMs = nowMs + this.ttlMs;
    const payload = `${expiresAtMs.toString(36)}.${id}`;
    const value = `${payload}.${this.sign(payload)}`;
    this.remember(id, expiresAtMs, nowMs);
    const maxAge = Math.max(1, Math.floor(this.ttlMs / 1000));
    return {
      value,
      setCookie: `${this.cookieName}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}`,
      session: { id, expiresAtMs },
    };
  }

  /** The session a `Cookie` header carries, if its signature holds and it has not expired. */
  verify(cookieHeader: unknown, nowMs: number): DashboardSession | undefined {
    const value = cookieValue(cookieHeader, this.cookieName);
    if (value === undefined) return undefined;
    const parts = value.split('.');
    if (parts.length !== 3) return undefined;
    const [expiry, id, mac] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${expiry}.${id}`));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    const expiresAtMs = Number.parseInt(expiry, 36);
    if (!Number.isFinite(expiresAtMs) || expiresAtMs <= nowMs || expiresAtMs > nowMs + this.ttlMs) return undefined;
    this.remember(id, expiresAtMs, nowMs);
    return { id, expiresAtMs };
  }

  /** Live sessions this process has seen. */
  size(nowMs: number): number {
    this.expire(nowMs);
    return this.known.size;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  private remember(id: string, expiresAtMs: number, nowMs: number): void {
    this.known.set(id, expiresAtMs);
    if (this.known.size > 10_000) this.expire(nowMs);
  }

  private expire(nowMs: number): void {
    for (const [id, at] of this.known) if (at <= nowMs) this.known.delete(id);
    // Bounded whatever a client does: the oldest are forgotten (they still verify by signature).
    for (const id of this.known.keys()) {
      if (this.known.size <= 10_000) break;
      this.known.delete(id);
    }
  }
}
