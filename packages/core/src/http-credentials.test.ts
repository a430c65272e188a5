import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerToken, cookieValue, decodeComponent, httpCredentialOf, pathOf, queryParam } from './http-credentials.js';

/** The cookie that once held the secret itself: read by nothing now. */
const AUTH_COOKIE = 'rebound_token';

/** Strings a peer may send: any unicode, lone surrogates, '%' escapes good and bad, separators. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.stringMatching(/^[%=;, \t?&#A-Za-z0-9]{0,60}$/),
  fc
    .array(fc.constantFrom('%', '%E0', '%A4%A', '%ff', '%%', '=', ';', 'rebound_token', 'token', '?', '&'), {
      maxLength: 20,
    })
    .map((parts) => parts.join('')),
);
const headerValue = fc.oneof(hostile, fc.array(hostile, { maxLength: 3 }), fc.constant(undefined), fc.integer());

describe('HTTP credential parsers (total: a bad value is no credential, never an exception)', () => {
  it('never throw, on any header or URL', () => {
    fc.assert(
      fc.property(headerValue, headerValue, headerValue, (cookie, authorization, url) => {
        const got = httpCredentialOf({ cookie, authorization }, url);
        if (got !== undefined) expect(got.secret.length).toBeGreaterThan(0);
        cookieValue(cookie, AUTH_COOKIE);
        bearerToken(authorization);
        expect(pathOf(url).includes('?')).toBe(false);
        queryParam(url, 'token');
      }),
      { numRuns: 5000 },
    );
  });

  it('a cookie or query that does not decode counts as absent', () => {
    expect(decodeComponent('%')).toBeUndefined();
    for (const cookie of ['rebound_token=%', 'rebound_token=%E0%A4%A', 'a=1; rebound_token=%ff', 'rebound_token='])
      expect(httpCredentialOf({ cookie }, '/overview'), cookie).toBeUndefined();
    expect(httpCredentialOf({}, '/overview?token=%')).toEqual({ secret: '%', via: 'query' });
    expect(httpCredentialOf({}, '/overview?token=')).toBeUndefined();
    expect(httpCredentialOf({ authorization: 'Basic abc' }, '/')).toBeUndefined();
    expect(httpCredentialOf({ authorization: 'Bearer' }, '/')).toBeUndefined();
  });

  it('reads the well-formed ones', () => {
    expect(httpCredentialOf({ authorization: 'Bearer s3cret' }, '/?token=other')).toEqual({
      secret: 's3cret',
      via: 'header',
    });
    expect(cookieValue(`x=1; ${AUTH_COOKIE}=a%3Db`, AUTH_COOKIE)).toBe('a=b');
    // A cookie never carries the secret: a browser holds a session (DashboardSessions).
    expect(httpCredentialOf({ cookie: `${AUTH_COOKIE}=s3cret` }, '/')).toBeUndefined();
    expect(httpCredentialOf({}, '/jobs?x=1&token=abc#frag')).toEqual({ secret: 'abc', via: 'query' });
    expect(pathOf('/jobs/1?token=abc')).toBe('/jobs/1');
    expect(pathOf('/jobs/1#x?token=abc')).toBe('/jobs/1');
  });

  it('round-trips any secret through the cookie and query encodings', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 100 }).filter((s) => s.trim() === s),
        (secret) => {
          expect(cookieValue(`${AUTH_COOKIE}=${encodeURIComponent(secret)}`, AUTH_COOKIE)).toBe(secret);
          expect(queryParam(`/?token=${encodeURIComponent(secret)}`, 'token')).toBe(secret);
        },
      ),
    );
  });
});
