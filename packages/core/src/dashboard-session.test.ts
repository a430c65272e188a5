import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DashboardSessions } from './dashboard-session.js';

const SECRET = 'dashboard-session-secret-0123456789';
const HOUR = 3_600_000;

describe('DashboardSessions', () => {
  it('issues a random, expiring session that another JobMaster of the cluster accepts', () => {
    const leader = new DashboardSessions(SECRET, HOUR);
    const standby = new DashboardSessions(SECRET, HOUR);
    const { value, setCookie } = leader.issue(1_000);
    expect(setCookie).toBe(`${leader.cookieName}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=3600`);
    expect(setCookie).not.toContain(SECRET);
    expect(leader.issue(1_000).value).not.toBe(value);
    const cookie = `other=1; ${leader.cookieName}=${value}`;
    expect(standby.verify(cookie, 2_000)).toBeDefined();
    expect(standby.verify(cookie, 1_000 + HOUR)).toBeUndefined();
    // Another cluster (another secret): another cookie name, and no session of this one.
    const other = new DashboardSessions('another-cluster-secret-0123456789', HOUR);
    expect(other.cookieName).not.toBe(leader.cookieName);
    expect(other.verify(`${other.cookieName}=${value}`, 2_000)).toBeUndefined();
  });

  it('fuzz: a tampered or made-up value is never a session', () => {
    const sessions = new DashboardSessions(SECRET, HOUR);
    const { value } = sessions.issue(0);
    fc.assert(
      fc.property(fc.nat({ max: value.length - 1 }), fc.string({ minLength: 1, maxLength: 3 }), (at, insert) => {
        const forged = `${value.slice(0, at)}${insert}${value.slice(at + 1)}`;
        fc.pre(forged !== value);
        expect(sessions.verify(`${sessions.cookieName}=${forged}`, 1)).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (junk) => {
        expect(sessions.verify(`${sessions.cookieName}=${junk}`, 1)).toBeUndefined();
        expect(sessions.verify(junk, 1)).toBeUndefined();
      }),
    );
    // An expiry beyond the lifetime (a value signed for longer) is refused too.
    expect(sessions.verify(`${sessions.cookieName}=${value}`, -1)).toBeUndefined();
  });
});
