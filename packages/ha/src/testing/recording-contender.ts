import type { LeaderContender } from '../ha-services.js';

export type ContenderEvent =
  { readonly type: 'grant'; readonly epoch: number } | { readonly type: 'revoke'; readonly reason: string };

/** A LeaderContender for tests: records every callback and lets a test await the next one. */
export class RecordingContender implements LeaderContender {
  readonly events: ContenderEvent[] = [];
  private readonly waiters: Array<{ pred: (e: ContenderEvent) => boolean; resolve: (e: ContenderEvent) => void }> = [];

  constructor(private readonly onGrant?: (epoch: number, ended: AbortSignal) => void | Promise<void>) {}

  async grantLeadership(epoch: number, ended: AbortSignal): Promise<void> {
    this.record({ type: 'grant', epoch });
    await this.onGrant?.(epoch, ended);
  }

  revokeLeadership(reason: string): void {
    this.record({ type: 'revoke', reason });
  }

  grants(): number[] {
    return this.events.flatMap((e) => (e.type === 'grant' ? [e.epoch] : []));
  }

  revocations(): string[] {
    return this.events.flatMap((e) => (e.type === 'revoke' ? [e.reason] : []));
  }

  /** Resolves with the first event from index `from` on that matches. */
  waitFor(pred: (e: ContenderEvent) => boolean, from = 0): Promise<ContenderEvent> {
    const found = this.events.slice(from).find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /** The first grant at or after event index `from` (take the index before causing the grant). */
  async nextGrant(from: number): Promise<number> {
    const e = await this.waitFor((x) => x.type === 'grant', from);
    return e.type === 'grant' ? e.epoch : Number.NaN;
  }

  async nextRevoke(from: number): Promise<string> {
    const e = await this.waitFor((x) => x.type === 'revoke', from);
    return e.type === 'revoke' ? e.reason : '';
  }

  private record(e: ContenderEvent): void {
    this.events.push(e);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.pred(e)) {
        this.waiters.splice(i, 1);
        w.resolve(e);
      }
    }
  }
}
