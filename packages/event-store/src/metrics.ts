/**
 * Process-wide observations of every JobEventStore in this process, for a metrics exporter (the
 * JobMaster's /metrics). The store stays free of any metrics library: it only calls these hooks.
 */
export interface EventStoreObserver {
  onAppend(frameBytes: number): void;
  onFlush(durationMs: number, bytesWritten: number): void;
}

const observers = new Set<EventStoreObserver>();

/** Registers an observer; returns the function that removes it. */
export function observeEventStores(o: EventStoreObserver): () => void {
  observers.add(o);
  return () => observers.delete(o);
}

export function reportAppend(frameBytes: number): void {
  for (const o of observers) o.onAppend(frameBytes);
}

export function reportFlush(durationMs: number, bytesWritten: number): void {
  for (const o of observers) o.onFlush(durationMs, bytesWritten);
}
