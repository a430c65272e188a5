import { describe, expect, it } from 'vitest';
import { Configuration, closestMatch } from './config.js';

describe('unknown configuration keys', () => {
  it('suggest the key a typo meant', () => {
    expect(() => Configuration.of({ 'heartbeat.timout': '5s' })).toThrow(
      "unknown configuration key 'heartbeat.timout' (did you mean 'heartbeat.timeout'?); see 'rebound config' for the known keys",
    );
  });

  it('suggest nothing for a word that is not a typo of any key', () => {
    expect(() => Configuration.of({ 'no.such.key': '1' })).toThrow(
      "unknown configuration key 'no.such.key'; see 'rebound config' for the known keys",
    );
    expect(closestMatch('submit', ['list', 'status'])).toBeUndefined();
    expect(closestMatch('stauts', ['list', 'status'])).toBe('status');
  });
});
