export interface WaitOptions {
  readonly intervalMs?: number;
}

/** Thrown by a waitFor predicate to stop waiting at once (e.g. the job ended in the wrong state). */
export class TerminalStateError extends Error {}

/**
 * Polls `predicate` until it returns something other than undefined/false/null, or throws
 * after `timeoutMs` saying what it waited for (no fixed sleeps). Errors thrown by the predicate
 * count as "not yet" and the last one is reported; a TerminalStateError ends the wait.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  opts: WaitOptions = {},
): Promise<Exclude<T, undefined | false | null>> {
  const deadline = Date.now() + timeoutMs;
  const interval = opts.intervalMs ?? 50;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v !== undefined && v !== false && v !== null) return v as Exclude<T, undefined | false | null>;
    } catch (err) {
      if (err instanceof TerminalStateError) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      const last = lastError
        ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`
        : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
