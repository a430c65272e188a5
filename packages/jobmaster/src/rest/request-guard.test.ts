import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostAllowed, hostNameOf } from './request-guard.js';

/** Host header values a peer may send: any unicode, ports good and bad, brackets, separators. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 320 }),
  fc
    .array(
      fc.constantFrom('[', ']', ':', '::1', '127.0.0.1', 'localhost', '%', '.', '-', '@', '/', ' ', '99999', 'a'),
      {
        maxLength: 12,
      },
    )
    .map((parts) => parts.join('')),
);
const headerValue = fc.oneof(hostile, fc.array(hostile, { maxLength: 2 }), fc.constant(undefined), fc.integer());

/** The Host check runs before authentication (request-guard.ts): it must be total. */
describe('Host header guard', () => {
  it('fuzz: never throws, and allows only IPs, localhost and the names it was given', () => {
    const names = new Set(['jm.example']);
    fc.assert(
      fc.property(headerValue, (header) => {
        const name = hostNameOf(header);
        const allowed = hostAllowed(header, names);
        if (name !== undefined) expect(name).toMatch(/^[0-9a-z.:-]+$/);
        if (allowed && header !== undefined) {
          expect(name).toBeDefined();
          expect(name === 'localhost' || name === 'jm.example' || /^[0-9a-f.:]+$/.test(name!)).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('reads host names, IPv4 and bracketed IPv6 with or without a port; refuses the rest', () => {
    expect(hostNameOf('JM.Example:8081')).toBe('jm.example');
    expect(hostNameOf('[::1]:8081')).toBe('::1');
    expect(hostNameOf('127.0.0.1')).toBe('127.0.0.1');
    for (const bad of ['', '%', 'a b', 'user@host', 'host/x', '[::1', 'a'.repeat(301), 'h:123456'])
      expect(hostNameOf(bad), bad).toBeUndefined();
    expect(hostAllowed('rebind.attacker.example', new Set(['jm.example']))).toBe(false);
    expect(hostAllowed('jm.example:1', new Set(['jm.example']))).toBe(true);
    expect(hostAllowed(undefined, new Set())).toBe(true);
  });
});
