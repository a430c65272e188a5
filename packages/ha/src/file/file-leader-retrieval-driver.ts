import { type Configuration, type Logger, PeriodicTask } from '@rebound/core';
import { DefaultLeaderRetrievalService } from '../default-leader-retrieval-service.js';
import { type LeaderInfo, readLeader } from '../leader-info.js';
import type { LeaderRetrievalDriver, LeaderRetrievalDriverEvents } from '../leader-retrieval-driver.js';

export type { LeaderRetrievalListener } from '../ha-services.js';

export interface LeaderRetrievalServiceOptions {
  readonly haDir: string;
  readonly config: Configuration;
  readonly logger: Logger;
}

/** Follows `<ha>/leader.json` (the file backend's name for a DefaultLeaderRetrievalService). */
export class LeaderRetrievalService extends DefaultLeaderRetrievalService {
  constructor(options: LeaderRetrievalServiceOptions) {
    super(
      new FileLeaderRetrievalDriver(
        options.haDir,
        options.config.getDurationMs('high-availability.lease.poll-interval'),
      ),
      options.logger.child({ component: 'LeaderRetrievalService' }),
    );
  }
}

/** Polls `<ha>/leader.json` every `high-availability.lease.poll-interval`. */
export class FileLeaderRetrievalDriver implements LeaderRetrievalDriver {
  readonly followFailure = 'cannot read leader.json';
  private task: PeriodicTask | undefined;

  constructor(
    private readonly haDir: string,
    private readonly pollIntervalMs: number,
  ) {}

  read(): Promise<LeaderInfo | undefined> {
    return readLeader(this.haDir);
  }

  follow(events: LeaderRetrievalDriverEvents): void {
    // One task for the driver's life (its service's events never change): it never overlaps itself.
    this.task ??= new PeriodicTask(
      this.pollIntervalMs,
      () => events.refresh().then(() => undefined),
      (err) => events.error(err),
    );
    this.task.start(true);
  }

  unfollow(): void {
    this.task?.stop();
  }

  noLeaderMessage(timeoutMs: number, lastError: string | undefined): string {
    return `no JobMaster leader in ${this.haDir} after ${timeoutMs} ms${lastError ? ` (${lastError})` : ''}; check that a JobMaster runs with --ha-dir ${this.haDir}`;
  }
}
