import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLeader } from './leader-info.js';
import { ContenderProcess } from './testing/contender-process.js';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, 'testing', 'contender.ts');

/** One contender process on the file backend. */
class Contender extends ContenderProcess {
  constructor(id: string, haDir: string) {
    super(id, script, [haDir, id], {
      stdin: false,
      // A 2 s lease: a leader starved for 500 ms while the other contenders start (three tsx
      // start-ups at once) lost it at load 20, and a second grant appeared before the first check.
      env: { ...process.env, REBOUND_TEST_LEASE: '2000,200,100' },
    });
  }
}

/** Resolves with the first of `contenders` to print a GRANTED line after the given marks. */
function firstGrant(
  contenders: Contender[],
  marks: number[],
  timeoutMs: number,
): Promise<{ contender: Contender; epoch: number }> {
  return Promise.any(
    contenders.map(async (c, i) => ({
      contender: c,
      epoch: Number((await c.line(/^GRANTED /, marks[i]!, timeoutMs)).slice(8)),
    })),
  );
}

/** How long a takeover may take before the test calls it hung. */
const TAKEOVER_DEADLINE_MS = 30_000;

let haDir: string;
let procs: Contender[] = [];

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-mp-'));
});

afterEach(async () => {
  for (const c of procs) {
    c.signal('SIGCONT');
    c.signal('SIGKILL');
  }
  procs = [];
  await rm(haDir, { recursive: true, force: true });
});

describe('leader election across processes', () => {
  it(
    'fails over on SIGKILL and SIGSTOP; a resumed old leader notices it lost and leader.json keeps the newer epoch',
    { timeout: 120_000 },
    async () => {
      procs = ['jm-1', 'jm-2', 'jm-3'].map((id) => new Contender(id, haDir));
      // Generous: three tsx start-ups on a loaded 2-core machine.
      await Promise.all(procs.map((c) => c.line(/^STARTED$/, 0, 60_000)));
      const first = await firstGrant(procs, [0, 0, 0], 5_000);
      expect(procs.flatMap((c) => c.grants())).toEqual([first.epoch]);

      // 1. The leader dies: a standby takes the expired lease.
      let rest = procs.filter((c) => c !== first.contender);
      let marks = rest.map((c) => c.lines.length);
      first.contender.signal('SIGKILL');
      // Deadlines only bound a hang: how fast a takeover is, is a figure for a benchmark, not a
      // pass/fail line for a test on a shared, loaded machine.
      const second = await firstGrant(rest, marks, TAKEOVER_DEADLINE_MS);
      expect(second.epoch).toBeGreaterThan(first.epoch);

      // 2. The new leader is paused: it cannot renew, so the last one takes over.
      rest = rest.filter((c) => c !== second.contender);
      marks = rest.map((c) => c.lines.length);
      second.contender.signal('SIGSTOP');
      const third = await firstGrant(rest, marks, TAKEOVER_DEADLINE_MS);
      expect(third.epoch).toBeGreaterThan(second.epoch);
      expect(await readLeader(haDir)).toMatchObject({ epoch: third.epoch, jobmasterId: third.contender.id });

      // 3. The paused leader resumes: its late renewal finds the lease gone and revokes.
      const mark = second.contender.lines.length;
      second.contender.signal('SIGCONT');
      const revoked = await second.contender.line(/^REVOKED /, mark, TAKEOVER_DEADLINE_MS);
      expect(revoked).toMatch(/lease lost: the lock is now held by jm-/);
      expect(await readLeader(haDir)).toMatchObject({ epoch: third.epoch, jobmasterId: third.contender.id });
      expect(third.contender.lines.filter((l) => l.startsWith('REVOKED'))).toEqual([]);
    },
  );
});
