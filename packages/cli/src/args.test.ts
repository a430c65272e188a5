import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@rebound/core';
import { InvalidArgumentError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfiguration, collect, parseDurationArg, parseDynamicProperties, parsePositiveInt } from './args.js';

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('-D parsing', () => {
  it('collects repeated values in order', () => {
    expect(collect('b=2', collect('a=1', []))).toEqual(['a=1', 'b=2']);
  });

  it('parses key=value pairs, trimming and keeping = in values', () => {
    expect(parseDynamicProperties(['rpc.timeout = 3 s', 'jobmaster.bind-host=a=b'])).toEqual({
      'rpc.timeout': '3 s',
      'jobmaster.bind-host': 'a=b',
    });
  });

  it('names an unknown key', () => {
    expect(() => parseDynamicProperties(['no.such.key=1'])).toThrow(ConfigError);
    expect(() => parseDynamicProperties(['no.such.key=1'])).toThrow(/unknown configuration key 'no.such.key'/);
  });

  it('names the key of a bad duration', () => {
    expect(() => parseDynamicProperties(['heartbeat.timeout=soon'])).toThrow(
      /heartbeat.timeout: 'soon' is not a duration/,
    );
  });

  it('rejects an argument without =', () => {
    expect(() => parseDynamicProperties(['heartbeat.timeout'])).toThrow(/expected key=value/);
    expect(() => parseDynamicProperties(['=1'])).toThrow(/expected key=value/);
  });
});

describe('buildConfiguration', () => {
  it('applies -D over the YAML file', () => {
    const dir = tempDir('rebound-cli-');
    const file = join(dir, 'conf.yaml');
    writeFileSync(file, 'heartbeat:\n  interval: 1 s\n  timeout: 9 s\nrpc.timeout: 4 s\n');
    const config = buildConfiguration({ configFile: file, dynamic: ['rpc.timeout=7 s'] });
    expect(config.getDurationMs('heartbeat.interval')).toBe(1_000);
    expect(config.getDurationMs('heartbeat.timeout')).toBe(9_000);
    expect(config.getDurationMs('rpc.timeout')).toBe(7_000);
  });

  it('fails on a missing config file with its path', () => {
    expect(() => buildConfiguration({ configFile: '/nonexistent/rebound.yaml', dynamic: [] })).toThrow(
      /cannot read config file \/nonexistent\/rebound.yaml/,
    );
  });
});

describe('option values', () => {
  it('accepts positive integers only', () => {
    expect(parsePositiveInt('3')).toBe(3);
    for (const bad of ['0', '-1', 'x', '1.5', '']) expect(() => parsePositiveInt(bad)).toThrow(InvalidArgumentError);
  });

  it('parses durations like configuration values', () => {
    expect(parseDurationArg('30 s')).toBe(30_000);
    expect(parseDurationArg('250ms')).toBe(250);
    expect(() => parseDurationArg('later')).toThrow(InvalidArgumentError);
  });
});
