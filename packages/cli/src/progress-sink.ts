import type { WatchView } from './watch-model.js';

// Not in progress.ts: the TTY sink, which progress.ts loads lazily, implements them too, and
// would otherwise import progress.ts back.

/** Where progress goes: process.stdout, or a fake in tests. */
export interface TextOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

export interface ProgressSink {
  /** The whole view after an observation, and the events that observation caused (one line each). */
  update(view: WatchView, events: readonly string[]): void;
  /** Leaves the last state on screen. */
  finish(): void;
}
