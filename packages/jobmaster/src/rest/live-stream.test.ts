import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@rebound/core';
import { LiveStream } from './live-stream.js';

/** A response that records what the stream writes. */
function fakeResponse(): ServerResponse & { chunks: string[]; ended: boolean } {
  const res = new EventEmitter() as unknown as ServerResponse & { chunks: string[]; ended: boolean };
  res.chunks = [];
  res.ended = false;
  Object.assign(res, {
    writableLength: 0,
    writeHead: () => res,
    write: (s: string) => (res.chunks.push(s), true),
    end: (s?: string) => {
      if (s) res.chunks.push(s);
      res.ended = true;
      return res;
    },
    destroy: () => res,
  });
  return res;
}

const events = (chunks: string[]): string[] =>
  chunks.flatMap((c) => [...c.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]!));

describe('LiveStream', () => {
  it('coalesces changes to at most one update per interval and sends only what changed', async () => {
    let version = 0;
    let computed = 0;
    const stream = new LiveStream(
      {
        active: () => true,
        common: async () => (computed++, { cluster: { epoch: 1 }, jobs: { version } }),
        job: async () => ({}),
      },
      100,
      silentLogger(),
    );
    const a = fakeResponse();
    const b = fakeResponse();
    stream.attach(a, {}, undefined);
    stream.attach(b, {}, undefined);
    // 50 changes in ~300 ms: a client sees a handful of updates, not 50.
    const start = Date.now();
    while (Date.now() - start < 300) {
      version++;
      await new Promise((r) => setTimeout(r, 6));
    }
    await new Promise((r) => setTimeout(r, 120));
    stream.close();
    const sentA = events(a.chunks);
    expect(sentA.filter((e) => e === 'cluster')).toEqual(['cluster']); // unchanged: sent once
    const jobsUpdates = sentA.filter((e) => e === 'jobs').length;
    expect(jobsUpdates).toBeGreaterThanOrEqual(1);
    expect(jobsUpdates).toBeLessThanOrEqual(6);
    expect(events(b.chunks)).toEqual(sentA);
    // One computation per tick, shared by both clients.
    expect(computed).toBeLessThanOrEqual(jobsUpdates + 2);
  });

  it('ends every stream when this process stops leading', async () => {
    let leading = true;
    const stream = new LiveStream(
      { active: () => leading, common: async () => ({ cluster: {} }), job: async () => ({}) },
      20,
      silentLogger(),
    );
    const a = fakeResponse();
    stream.attach(a, {}, undefined);
    leading = false;
    await new Promise((r) => setTimeout(r, 80));
    expect(a.ended).toBe(true);
    expect(events(a.chunks)).toContain('end');
    stream.close();
  });
});
