import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, ReboundError, loadProto, unary } from '@rebound/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

async function rejection(p: Promise<unknown>): Promise<ReboundError> {
  try {
    await p;
  } catch (e) {
    return e as ReboundError;
  }
  throw new Error('the forged call was accepted');
}

/**
 * Forged JobMaster→TaskManager calls, sent raw to a TaskManager of a running cluster by someone
 * who is not its leader: a claimed epoch far above the real one must not fence the real leader
 * out, and must not cancel or release anything.
 */
describe('forged epochs', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 2, slots: 2 });
    data = await makeTempDir('rebound-it-forged-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('are refused without raising the fence, and the real leader still runs jobs', async () => {
    const leader = await cluster.leader();
    expect(leader).toBeDefined();
    const proto = loadProto();
    const forgedEpoch = 9e15;
    for (const tm of (await cluster.processes()).filter((p) => p.role === 'taskmanager')) {
      // An insider with the cluster secret: authentication passes, the epoch fence must still hold.
      const security = cluster.security();
      const client = new proto.TaskExecutorGateway(tm.address, security.channelCredentials(), security.channelOptions());
      try {
        const cancel = await rejection(unary(client, client.CancelTask, { epoch: forgedEpoch, execution: { job_id: 'j', vertex_id: 'v', subtask: 0, attempt: 0 } }, 10_000));
        expect(cancel.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
        const release = await rejection(unary(client, client.ReleasePartitions, { epoch: forgedEpoch, partitions: [] }, 10_000));
        expect(release.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
        const disconnect = await rejection(unary(client, client.DisconnectJob, { epoch: forgedEpoch, job_id: 'j', release_partitions: true }, 10_000));
        expect(disconnect.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
      } finally {
        client.close();
      }
    }

    // Before the fence asked the leader record, the first forged call above raised every
    // TaskManager's fence to 9e15, and each deploy of the real leader was then refused as stale.
    const input = join(data, 'in');
    const output = join(data, 'out');
    const files = await generateTextFiles(input, { files: 4, linesPerFile: 200, seed: 3 });
    const run = await cluster.submit('examples/wordcount.ts', ['--input', input, '--output', output], { wait: true, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(output))).toEqual([]);
  });
});
