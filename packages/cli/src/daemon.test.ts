import { EventEmitter } from 'node:events';
import { silentLogger } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { parseReadyLine, runDaemonLifecycle, type DaemonProcess, type SignalSource } from './daemon.js';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function harness(opts: { closeNever?: boolean; startupTimeoutMs?: number } = {}) {
  const signals = new EventEmitter();
  let out = '';
  const started = deferred<void>();
  const release = deferred<void>();
  let closed = 0;
  const proc: DaemonProcess = {
    id: 'jm-1',
    address: '127.0.0.1:4711',
    close: () => {
      closed++;
      return opts.closeNever ? new Promise(() => {}) : Promise.resolve();
    },
  };
  const run = runDaemonLifecycle({
    role: 'jobmaster',
    start: async () => {
      started.resolve();
      await release.promise;
      return proc;
    },
    logger: silentLogger(),
    stdout: { write: (t: string) => (out += t) },
    signals: signals as unknown as SignalSource,
    pid: 42,
    shutdownTimeoutMs: 50,
    startupTimeoutMs: opts.startupTimeoutMs ?? 60_000,
  });
  return { signals, run, started, release, out: () => out, closed: () => closed };
}

describe('runDaemonLifecycle', () => {
  it('announces readiness once started and closes on SIGTERM', async () => {
    const h = harness();
    await h.started.promise;
    expect(h.signals.listenerCount('SIGTERM')).toBe(1);
    h.release.resolve();
    await new Promise((r) => setImmediate(r));
    expect(parseReadyLine(h.out().trim())).toEqual({
      event: 'ready',
      role: 'jobmaster',
      id: 'jm-1',
      address: '127.0.0.1:4711',
      pid: 42,
    });
    h.signals.emit('SIGTERM');
    expect(await h.run).toBe(0);
    expect(h.closed()).toBe(1);
    expect(h.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('has its handlers before start: a signal while starting closes without a ready line', async () => {
    const h = harness();
    await h.started.promise;
    h.signals.emit('SIGINT');
    h.release.resolve();
    expect(await h.run).toBe(0);
    expect(h.out()).toBe('');
    expect(h.closed()).toBe(1);
  });

  it('exits 1 when close() outlives the shutdown timeout', async () => {
    const h = harness({ closeNever: true });
    h.release.resolve();
    await h.started.promise;
    await new Promise((r) => setImmediate(r));
    h.signals.emit('SIGTERM');
    expect(await h.run).toBe(1);
  });

  it('exits 1 within the shutdown timeout when a stop signal meets a start that never ends', async () => {
    const h = harness();
    await h.started.promise;
    h.signals.emit('SIGTERM');
    // release is never resolved: start() hangs, as on a broken --ha-dir.
    expect(await h.run).toBe(1);
    expect(h.out()).toBe('');
    expect(h.closed()).toBe(0);
    expect(h.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('fails with the start-up deadline named when start() outlives it', async () => {
    const h = harness({ startupTimeoutMs: 20 });
    await h.started.promise;
    await expect(h.run).rejects.toThrow(/did not finish starting within 20 ms \(cluster\.startup\.timeout\)/);
    expect(h.out()).toBe('');
    expect(h.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('propagates a failed start and removes its handlers', async () => {
    const signals = new EventEmitter();
    const run = runDaemonLifecycle({
      role: 'taskmanager',
      start: () => Promise.reject(new Error('port 1 on 127.0.0.1 is already in use')),
      logger: silentLogger(),
      stdout: { write: () => true },
      signals: signals as unknown as SignalSource,
      pid: 1,
      shutdownTimeoutMs: 50,
      startupTimeoutMs: 60_000,
    });
    await expect(run).rejects.toThrow('already in use');
    expect(signals.listenerCount('SIGTERM')).toBe(0);
  });
});

describe('parseReadyLine', () => {
  it('ignores anything that is not a ready line', () => {
    expect(parseReadyLine('')).toBeUndefined();
    expect(parseReadyLine('{"event":"other"}')).toBeUndefined();
    expect(parseReadyLine('{"event":"ready","role":"x","id":"a","address":"b","pid":1}')).toBeUndefined();
  });

  it('knows every daemon role, the shuffle worker too', () => {
    expect(parseReadyLine('{"event":"ready","role":"shuffle-worker","id":"sw-1","address":"h:1","pid":7}')).toEqual({
      event: 'ready',
      role: 'shuffle-worker',
      id: 'sw-1',
      address: 'h:1',
      pid: 7,
    });
  });
});
