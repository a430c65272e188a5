import { errorMessage, UserCodeError } from '@rebound/core';
import type { Logger } from '@rebound/core';
import type { Transformation } from '@rebound/api';
import { OperatorCoordinatorHolder } from '../operator-coordinator-holder.js';
import { SourceCoordinator } from '../source-coordinator.js';
import type {
  CoordinatorHolderApi,
  CoordinatorHolderSpec,
  JobUserCode,
  SourceCoordinatorApi,
  UserOperatorInfo,
} from './job-user-code.js';

/**
 * The job's user code in the calling isolate: what a worker hosts for the daemon, and what unit
 * tests and benchmarks drive directly. Nothing here survives a user call that exits the process.
 */
export class InProcessUserCode implements JobUserCode {
  constructor(
    private readonly operators: ReadonlyMap<string, Transformation>,
    private readonly logger: Logger,
  ) {}

  operator(id: string): UserOperatorInfo | undefined {
    const op = this.operators.get(id);
    return op && { id: op.id, name: op.name, kind: op.kind, hasCoordinator: op.kind === 'process' && !!op.coordinator };
  }

  private source(operatorId: string): Extract<Transformation, { kind: 'source' }> {
    const op = this.operators.get(operatorId);
    if (op?.kind !== 'source') throw new UserCodeError(`the job module has no source ${operatorId}`);
    return op;
  }

  estimateSplits(operatorId: string): number | undefined {
    const op = this.source(operatorId);
    try {
      return op.source.estimateSplits?.();
    } catch (err) {
      throw new UserCodeError(`source '${op.name}': estimating its splits failed: ${errorMessage(err)}`);
    }
  }

  createSourceCoordinator(operatorId: string, vertexName: string, parallelism: number): SourceCoordinatorApi {
    return new SourceCoordinator(operatorId, vertexName, this.source(operatorId).source, parallelism, this.logger);
  }

  createCoordinatorHolder(spec: CoordinatorHolderSpec): CoordinatorHolderApi {
    const op = this.operators.get(spec.operatorId);
    if (op?.kind !== 'process' || !op.coordinator)
      throw new UserCodeError(`the job module's operator ${spec.operatorId} has no coordinator`);
    return new OperatorCoordinatorHolder(
      spec.vertexId,
      spec.operatorId,
      spec.operatorName,
      op.coordinator,
      spec.parallelism,
      this.logger,
      spec.maxHeldResponses,
    );
  }

  /** Nothing to hear: a failing call throws to its caller, and an exit ends this process. */
  onFailure(): void {}

  async close(): Promise<void> {}
}
