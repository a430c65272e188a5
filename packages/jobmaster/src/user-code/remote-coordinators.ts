import type { SourceSplit } from '@rebound/api';
import type { SplitAnswer } from '../source-coordinator.js';
import type { CoordinatorHolderApi, SourceCoordinatorApi } from './job-user-code.js';

/** The calls the proxies make; WorkerUserCode serves them. */
export interface UserCodeCalls {
  callSync(handle: number, method: string, args: readonly unknown[]): unknown;
  callAsync(handle: number, method: string, args: readonly unknown[]): Promise<unknown>;
  isAlive(): boolean;
}

/** A SourceCoordinator that lives in the job's user-code worker; its calls are the same. */
export class RemoteSourceCoordinator implements SourceCoordinatorApi {
  constructor(
    private readonly calls: UserCodeCalls,
    private readonly handle: number,
    readonly operatorId: string,
    readonly vertexName: string,
    readonly parallelism: number,
  ) {}

  private sync(method: keyof SourceCoordinatorApi, ...args: unknown[]): unknown {
    return this.calls.callSync(this.handle, method, args);
  }

  private async async(method: keyof SourceCoordinatorApi, ...args: unknown[]): Promise<unknown> {
    return this.calls.callAsync(this.handle, method, args);
  }

  async start(): Promise<void> {
    await this.async('start');
  }

  async close(): Promise<void> {
    if (this.calls.isAlive()) await this.async('close');
  }

  async requestSplit(subtask: number, attempt: number): Promise<SplitAnswer> {
    return (await this.async('requestSplit', subtask, attempt)) as SplitAnswer;
  }

  subtaskReset(subtask: number, attempt: number): void {
    this.sync('subtaskReset', subtask, attempt);
  }

  adoptReader(subtask: number, attempt: number, splits: readonly SourceSplit[]): void {
    this.sync('adoptReader', subtask, attempt, splits);
  }

  canAdoptReader(splits: readonly SourceSplit[]): boolean {
    return this.sync('canAdoptReader', splits) as boolean;
  }

  setAttempt(subtask: number, attempt: number): void {
    this.sync('setAttempt', subtask, attempt);
  }

  subtaskFinished(subtask: number, attempt: number): void {
    this.sync('subtaskFinished', subtask, attempt);
  }

  increment(subtask: number): Uint8Array {
    return this.sync('increment', subtask) as Uint8Array;
  }

  supportsBatchSnapshot(): boolean {
    return this.sync('supportsBatchSnapshot') as boolean;
  }

  async checkpointCoordinator(checkpointId: number): Promise<Uint8Array> {
    return (await this.async('checkpointCoordinator', checkpointId)) as Uint8Array;
  }

  snapshotNow(): Uint8Array | undefined {
    return this.sync('snapshotNow') as Uint8Array | undefined;
  }

  async resetToCheckpoint(checkpointId: number, state: Uint8Array): Promise<void> {
    await this.async('resetToCheckpoint', checkpointId, state);
  }

  async restore(
    snapshot: Uint8Array | undefined,
    finishedOwned: ReadonlyMap<number, SourceSplit[]>,
    attempts: ReadonlyMap<number, number>,
  ): Promise<void> {
    await this.async('restore', snapshot, finishedOwned, attempts);
  }
}

/** A user coordinator's holder that lives in the job's user-code worker. */
export class RemoteCoordinatorHolder implements CoordinatorHolderApi {
  constructor(
    private readonly calls: UserCodeCalls,
    private readonly handle: number,
    readonly vertexId: string,
    readonly operatorId: string,
  ) {}

  private sync(method: keyof CoordinatorHolderApi, ...args: unknown[]): unknown {
    return this.calls.callSync(this.handle, method, args);
  }

  private async async(method: keyof CoordinatorHolderApi, ...args: unknown[]): Promise<unknown> {
    return this.calls.callAsync(this.handle, method, args);
  }

  supportsBatchSnapshot(): boolean {
    return this.sync('supportsBatchSnapshot') as boolean;
  }

  supportsAdoption(): boolean {
    return this.sync('supportsAdoption') as boolean;
  }

  subtaskAdopted(subtask: number, attempt: number, responsesJson: readonly string[]): void {
    this.sync('subtaskAdopted', subtask, attempt, responsesJson);
  }

  increment(subtask: number, attempt: number, deployedHere: boolean): Uint8Array | undefined {
    return this.sync('increment', subtask, attempt, deployedHere) as Uint8Array | undefined;
  }

  async start(): Promise<void> {
    await this.async('start');
  }

  async resetToCheckpoint(state: Uint8Array | undefined): Promise<void> {
    await this.async('resetToCheckpoint', state);
  }

  snapshotNow(): Uint8Array {
    return this.sync('snapshotNow') as Uint8Array;
  }

  async handleRequest(subtask: number, attempt: number, requestJson: string): Promise<string> {
    return (await this.async('handleRequest', subtask, attempt, requestJson)) as string;
  }

  subtaskReset(subtask: number, nextAttempt: number): void {
    this.sync('subtaskReset', subtask, nextAttempt);
  }

  subtaskFinished(subtask: number, attempt: number): void {
    this.sync('subtaskFinished', subtask, attempt);
  }

  async close(): Promise<void> {
    if (this.calls.isAlive()) await this.async('close');
  }
}
