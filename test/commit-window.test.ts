import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { WORDCOUNT_JOB, deploymentsAfter, waitForNewLeader } from './recovery-util.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

const JOBMASTER = 'jm-1';
const SINK_PARALLELISM = 3;

interface Manifest {
  entries: { temp: string; final: string }[];
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The sink commit window: the leader has saved the commit manifest in the HA directory and then
 * dies (debug.crash.in-commit) before or while renaming the sinks' temporary files. The next
 * leader must finish that commit from the manifest — not rerun the job, not lose or duplicate a
 * part — and the output must equal word counts computed here from the input files.
 */
describe('a leader that dies inside the sink commit', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 1,
      taskmanagers: 2,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'debug.allow-test-options': 'true',
      },
    });
    data = await makeTempDir('rebound-it-commit-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  /** Restarts the only JobMaster with `config` and waits until it leads. */
  async function restartJobMaster(config: Record<string, string>): Promise<number> {
    const before = (await cluster.leader())?.epoch ?? 0;
    if (await cluster.isAlive(JOBMASTER)) await cluster.kill(JOBMASTER, 'SIGKILL');
    await cluster.startJobMaster({ id: JOBMASTER, config: { 'debug.allow-test-options': 'true', ...config } });
    return (await waitForNewLeader(cluster, before)).epoch;
  }

  for (const renames of [0, 1]) {
    it(`completes the commit from the manifest when the leader dies after ${renames} of ${SINK_PARALLELISM} renames`, async () => {
      const input = join(data, `in-${renames}`);
      const files = await generateTextFiles(input, { files: 3, linesPerFile: 40, seed: 100 + renames });
      const out = join(data, `out-${renames}`);
      // The JobMaster's log file is appended to across restarts: look only at what this test adds.
      const logFrom = (await cluster.log(JOBMASTER)).length;
      const newLog = async (): Promise<string> => (await cluster.log(JOBMASTER)).slice(logFrom);
      const crashingEpoch = await restartJobMaster({ 'debug.crash.in-commit': String(renames) });
      const { jobId } = await cluster.submit(WORDCOUNT_JOB, ['--input', input, '--output', out], {
        config: {
          'execution.batch.adaptive.auto-parallelism.min-parallelism': String(SINK_PARALLELISM),
          'execution.batch.adaptive.auto-parallelism.max-parallelism': String(SINK_PARALLELISM),
        },
      });
      await cluster.waitFor(
        async () => !(await cluster.isAlive(JOBMASTER)),
        120_000,
        `${JOBMASTER} to die at its crash point in the commit`,
      );
      expect(await newLog()).toMatch(/crash point reached: in commit/);

      // What the crash left: the manifest, exactly `renames` parts in place, the rest still temporary.
      const manifestFile = join(cluster.haDir, 'jobs', jobId, 'attachments', 'commit.json');
      const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Manifest;
      expect(manifest.entries).toHaveLength(SINK_PARALLELISM);
      const committed = await Promise.all(manifest.entries.map((e) => exists(e.final)));
      const pending = await Promise.all(manifest.entries.map((e) => exists(e.temp)));
      expect(committed.filter(Boolean)).toHaveLength(renames);
      expect(pending.filter(Boolean)).toHaveLength(SINK_PARALLELISM - renames);
      expect(await exists(join(out, '_SUCCESS'))).toBe(false);

      const takeoverEpoch = await restartJobMaster({ 'debug.crash.in-commit': '-1' });
      expect(takeoverEpoch).toBeGreaterThan(crashingEpoch);
      const final = await cluster.waitForJob(jobId, 60_000);
      expect(final.state).toBe('FINISHED');

      expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
      expect((await readdir(out)).filter((f) => f.startsWith('part-')).sort()).toEqual(
        Array.from({ length: SINK_PARALLELISM }, (_, i) => `part-${String(i).padStart(5, '0')}`),
      );
      expect(await exists(join(out, '_SUCCESS'))).toBe(true);
      expect(await exists(join(out, '.rebound-tmp'))).toBe(false);
      // Finished from the manifest: nothing ran again, and the new leader says what it did.
      expect(deploymentsAfter(await cluster.taskEvents(), jobId, crashingEpoch)).toEqual([]);
      expect(await newLog()).toMatch(/completed the commit a previous leader started/);
    });
  }
});
