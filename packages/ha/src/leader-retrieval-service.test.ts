import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, ErrorCode, ReboundError, silentLogger, writeFileAtomic } from '@rebound/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertHaDirInitialized, HaPaths } from './file/ha-dir.js';
import type { LeaderInfo } from './leader-info.js';
import { LeaderRetrievalService } from './file/file-leader-retrieval-driver.js';

const config = Configuration.of({
  'high-availability.lease.timeout': '60 s',
  'high-availability.lease.renew-interval': '1 s',
  'high-availability.lease.poll-interval': '10 ms',
});

let haDir: string;
const stoppers: Array<() => unknown> = [];

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-retrieval-'));
});

afterEach(async () => {
  for (const stop of stoppers.splice(0)) await stop();
  await rm(haDir, { recursive: true, force: true });
});

function retrieval(): LeaderRetrievalService {
  const s = new LeaderRetrievalService({ haDir, config, logger: silentLogger() });
  stoppers.push(() => s.stop());
  return s;
}

async function writeLeader(info: LeaderInfo): Promise<void> {
  await writeFileAtomic(HaPaths.leader(haDir), JSON.stringify(info));
}

/** Collects onLeaderChange calls and lets a test await the n-th one. */
class Changes {
  readonly seen: LeaderInfo[] = [];
  private waiters: Array<() => void> = [];
  onLeaderChange(info: LeaderInfo): void {
    this.seen.push(info);
    for (const w of this.waiters.splice(0)) w();
  }
  async count(n: number): Promise<LeaderInfo[]> {
    while (this.seen.length < n) await new Promise<void>((res) => this.waiters.push(res));
    return this.seen;
  }
}

/**
 * The file driver's own behaviour: leader.json written by hand (older epochs, address changes),
 * and the check of the HA directory. What both backends share is in leader-retrieval.drivers.test.ts.
 */
describe('LeaderRetrievalService', () => {
  it('reports newer epochs and address changes, never an older epoch', async () => {
    const svc = retrieval();
    const changes = new Changes();
    svc.start(changes);
    expect(await svc.refresh()).toBeUndefined();

    await writeLeader({ epoch: 1, jobmasterId: 'a', address: 'a:1', electedAtMs: 1 });
    expect(await svc.refresh()).toMatchObject({ epoch: 1 });
    await writeLeader({ epoch: 3, jobmasterId: 'b', address: 'b:1', electedAtMs: 2 });
    await svc.refresh();
    await writeLeader({ epoch: 2, jobmasterId: 'old', address: 'old:1', electedAtMs: 3 });
    expect(await svc.refresh()).toMatchObject({ epoch: 3, jobmasterId: 'b' });
    await writeLeader({ epoch: 3, jobmasterId: 'b', address: 'b:2', electedAtMs: 2 });
    await svc.refresh();

    expect((await changes.count(3)).map((i) => [i.epoch, i.address])).toEqual([
      [1, 'a:1'],
      [3, 'b:1'],
      [3, 'b:2'],
    ]);
    expect(svc.current()).toMatchObject({ epoch: 3, address: 'b:2' });
  });
});

describe('assertHaDirInitialized', () => {
  async function failure(dir: string): Promise<ReboundError> {
    const err = await assertHaDirInitialized(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReboundError);
    expect((err as ReboundError).code).toBe(ErrorCode.HA_DIR_INVALID);
    expect((err as ReboundError).message).not.toContain('\n');
    return err as ReboundError;
  }

  it('names the path and the fix when the directory does not exist', async () => {
    const missing = join(haDir, 'nope');
    expect((await failure(missing)).message).toBe(
      `HA directory ${missing} does not exist: no JobMaster has ever led there; start a JobMaster with --ha-dir ${missing} first or fix the path`,
    );
  });

  it('rejects a directory no JobMaster has used, and a plain file', async () => {
    expect((await failure(haDir)).message).toBe(
      `HA directory ${haDir} holds neither leader.json nor epochs/: no JobMaster has ever led there; start a JobMaster with --ha-dir ${haDir} first or fix the path`,
    );
    const file = join(haDir, 'file');
    await writeFile(file, '');
    expect((await failure(file)).message).toBe(`HA directory ${file} is not a directory: fix the --ha-dir path`);
  });

  it('accepts a directory with epochs/ or leader.json', async () => {
    await mkdir(HaPaths.epochsDir(haDir));
    await expect(assertHaDirInitialized(haDir)).resolves.toBeUndefined();
    const other = join(haDir, 'other');
    await mkdir(other);
    await writeFile(HaPaths.leader(other), '{}');
    await expect(assertHaDirInitialized(other)).resolves.toBeUndefined();
  });
});
