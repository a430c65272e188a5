import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CommitManifestRefusedError,
  applyCommit,
  parseCommitManifest,
  sinkFinalFile,
  sinkTempFile,
  type CommitManifest,
} from './sink-committer.js';

const JOB = 'job-1';
const VERTEX = 'sink';
const SUBTASKS = 3;

/** Interrupts a commit like a crash would: nothing after the throw runs. */
class Interrupted extends Error {}

/** Every file under `dir` with its content, so two directory trees compare with toEqual. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length + 1)] = await readFile(path, 'utf8');
  }
  return out;
}

describe('applyCommit', () => {
  let root: string;
  let out: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'rebound-commit-'));
    out = join(root, 'out');
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes each subtask's temporary file (and a stale part of an earlier, wider run); returns the manifest. */
  async function prepare(): Promise<CommitManifest> {
    const entries = [];
    for (let s = 0; s < SUBTASKS; s++) {
      const temp = sinkTempFile(out, JOB, VERTEX, s, 1, 7);
      await mkdir(join(temp, '..'), { recursive: true });
      await writeFile(temp, `subtask ${s}\n`);
      entries.push({ temp, final: sinkFinalFile(out, s) });
    }
    await writeFile(sinkFinalFile(out, SUBTASKS), 'stale part of an earlier run\n');
    return { jobId: JOB, entries, directories: [out] };
  }

  /** What one uninterrupted commit leaves, written out by hand (not by applyCommit). */
  function expected(): Record<string, string> {
    const files: Record<string, string> = { _SUCCESS: '' };
    for (let s = 0; s < SUBTASKS; s++) files[`part-${String(s).padStart(5, '0')}`] = `subtask ${s}\n`;
    return files;
  }

  it('commits every temporary file, removes stale parts and the temporary directory', async () => {
    await applyCommit(await prepare());
    expect(await snapshot(out)).toEqual(expected());
  });

  it('is idempotent: applying a committed manifest again changes nothing and does not fail', async () => {
    const manifest = await prepare();
    await applyCommit(manifest);
    await applyCommit(manifest);
    await applyCommit(manifest);
    expect(await snapshot(out)).toEqual(expected());
  });

  it('completes a commit interrupted after any number of renames when applied again', async () => {
    for (let k = 1; k <= SUBTASKS; k++) {
      await rm(out, { recursive: true, force: true });
      const manifest = await prepare();
      await expect(
        applyCommit(manifest, {
          afterRename: (n) => {
            if (n === k) throw new Interrupted(`after ${n} renames`);
          },
        }),
      ).rejects.toBeInstanceOf(Interrupted);
      // The interruption really happened half-way: k finals in place, the rest still temporary.
      const parts = (await readdir(out)).filter(
        (f) => f.startsWith('part-') && f !== `part-${String(SUBTASKS).padStart(5, '0')}`,
      );
      expect(parts).toHaveLength(k);
      await applyCommit(manifest);
      expect(await snapshot(out), `interrupted after ${k} renames`).toEqual(expected());
    }
  });

  it('fails loudly when a finished attempt left neither its temporary nor its final file', async () => {
    const manifest = await prepare();
    await rm(manifest.entries[1]!.temp);
    await expect(applyCommit(manifest)).rejects.toThrow(/part-00001/);
  });
});

describe('parseCommitManifest (a manifest read back from the HA store)', () => {
  let root: string;
  let out: string;
  let victim: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'rebound-manifest-'));
    out = join(root, 'jobs', 'out');
    victim = join(root, 'victim');
    await mkdir(join(victim, '.rebound-tmp', 'x'), { recursive: true });
    await writeFile(join(victim, 'part-00000'), 'precious\n');
    await writeFile(join(victim, 'keep'), 'precious\n');
    await mkdir(join(out, '.rebound-tmp', JOB), { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const bytes = (m: unknown): Uint8Array => Buffer.from(JSON.stringify(m));
  const temp = (dir: string, job = JOB): string => sinkTempFile(dir, job, VERTEX, 0, 1, 1);

  it("accepts the job's own manifest and commits it", async () => {
    await writeFile(temp(out), 'mine\n');
    const manifest = { jobId: JOB, entries: [{ temp: temp(out), final: sinkFinalFile(out, 0) }], directories: [out] };
    await applyCommit(parseCommitManifest(bytes(manifest), JOB, [out]));
    expect(await readFile(sinkFinalFile(out, 0), 'utf8')).toBe('mine\n');
    expect(parseCommitManifest(bytes({ ...manifest, directories: [`${out}/`] }), JOB, [out]).directories).toEqual([
      out,
    ]);
  });

  it('refuses a planted manifest that reaches outside the job, and touches nothing', async () => {
    await writeFile(temp(out), 'mine\n');
    const planted: unknown[] = [
      { jobId: '../../../victim', entries: [], directories: [out] },
      { jobId: 'other-job', entries: [], directories: [out] },
      { jobId: JOB, entries: [], directories: [victim] },
      { jobId: JOB, entries: [], directories: [join(out, '..', '..', 'victim')] },
      { jobId: JOB, entries: [{ temp: temp(out), final: join(victim, 'part-00000') }], directories: [out] },
      { jobId: JOB, entries: [{ temp: temp(out), final: join(out, 'keep') }], directories: [out] },
      { jobId: JOB, entries: [{ temp: join(victim, 'keep'), final: sinkFinalFile(out, 0) }], directories: [out] },
      { jobId: JOB, entries: [{ temp: temp(victim), final: sinkFinalFile(out, 0) }], directories: [out] },
      {
        jobId: JOB,
        entries: [{ temp: `${out}/.rebound-tmp/${JOB}/../../../victim/keep`, final: sinkFinalFile(out, 0) }],
        directories: [out],
      },
      { jobId: JOB, entries: [{ temp: 'relative/x', final: sinkFinalFile(out, 0) }], directories: [out] },
      { jobId: JOB, entries: [null], directories: [out] },
      { jobId: JOB, entries: {}, directories: [out] },
      { jobId: JOB, entries: [] },
      null,
      [],
    ];
    for (const m of planted) {
      expect(() => parseCommitManifest(bytes(m), JOB, [out]), JSON.stringify(m)).toThrow(CommitManifestRefusedError);
    }
    expect(() => parseCommitManifest(Buffer.from('{not json'), JOB, [out])).toThrow(/refusing the stored commit/);
    expect(await snapshot(victim)).toEqual({ 'part-00000': 'precious\n', keep: 'precious\n' });
    expect(await readFile(temp(out), 'utf8')).toBe('mine\n');
  });

  it('fuzz: whatever the store holds, it is refused or stays within the sink directory', () => {
    const segment = fc.constantFrom('..', '.', JOB, 'victim', '.rebound-tmp', 'part-00001', 'x', '');
    const path = fc.oneof(
      fc.array(segment, { maxLength: 6 }).map((s) => join(out, ...s)),
      fc.array(segment, { maxLength: 6 }).map((s) => `${out}/${s.join('/')}`),
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(JOB, '../../../victim', ''),
        fc.array(fc.record({ temp: path, final: path }), { maxLength: 3 }),
        fc.array(path, { maxLength: 2 }),
        (jobId, entries, directories) => {
          let m;
          try {
            m = parseCommitManifest(bytes({ jobId, entries, directories }), JOB, [out]);
          } catch (err) {
            expect(err).toBeInstanceOf(CommitManifestRefusedError);
            return;
          }
          for (const p of [...m.directories, ...m.entries.flatMap((e) => [e.temp, e.final])])
            expect(p === out || p.startsWith(`${out}/`), p).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
