import { execFileSync, spawnSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '@rebound/cli';
import { LocalCluster, REBOUND_BIN, REPO_ROOT, suiteFailed, waitFor } from './harness.js';
import { killLeader } from './recovery-util.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

/**
 * `rebound watch` in a real terminal: tmux panes of 80 and 120 columns watch the same job while
 * its leading JobMaster is SIGKILLed. Every screen tmux shows is captured and checked: no line
 * wider than the pane (a wrapped line would break the in-place redraw), never two headers (a stale
 * block left behind), the leaderless gap and the recovery summary shown, and the last screen
 * agreeing with the job's final status.
 */

const WIDTHS = [80, 120] as const;
const HEADER = /^wordcount [0-9a-f]{8} {2}/;

function hasTmux(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
}

class Tmux {
  constructor(
    private readonly socket: string,
    private readonly conf: string,
  ) {}

  run(args: readonly string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', this.conf, ...args], { encoding: 'utf8' });
  }

  start(session: string, width: number, command: string): void {
    this.run(['new-session', '-d', '-s', session, '-x', String(width), '-y', '50', command]);
  }

  /**
   * The pane's text, scrollback included (-S -: a block that scrolled off, or tmux's "Pane is dead"
   * line pushing the first row up, stays visible to the checks); -J joins lines the terminal
   * wrapped, so a too-wide line shows as one long line.
   */
  capture(session: string): string[] {
    const lines = this.run(['capture-pane', '-p', '-J', '-S', '-', '-t', session]).split('\n');
    while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
    return lines.map((l) => l.replace(/\s+$/, ''));
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
  }
}

// A fresh machine may lack tmux: `npm test` there skips this file and says so. CI (CI=true, where
// .ci/run installs tmux) never skips it: a missing tmux fails the run there.
const RUN_TMUX = hasTmux() || process.env.CI === 'true';
if (!RUN_TMUX)
  process.stdout.write('test/watch-tmux.test.ts skipped: tmux is not installed (apt-get install -y tmux)\n');

describe.skipIf(!RUN_TMUX)('watch in a terminal (tmux) through a leader SIGKILL', () => {
  let cluster: LocalCluster;
  let dir: string;
  let tmux: Tmux;

  beforeAll(async () => {
    if (!hasTmux()) throw new Error('tmux is not installed: apt-get install -y tmux (.ci/run does)');
    dir = await makeTempDir('rebound-tmux-');
    const conf = join(dir, 'tmux.conf');
    // Keep the pane (and its last screen) after watch exits; no status bar taking a row.
    await writeFile(conf, 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 5000\n');
    tmux = new Tmux(`rebound-test-${process.pid}`, conf);
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: { 'execution.batch.job-recovery.enabled': 'true' },
    });
  });

  afterAll(async ({}, suite) => {
    tmux?.kill();
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (dir && process.env.REBOUND_TMUX_DUMP !== '1') await rm(dir, { recursive: true, force: true });
  });

  it('redraws in place at 80 and 120 columns, shows the gap and the recovery, ends on the final status', async () => {
    // Eight small files (1 s of reading each) and a big one (15 s): once a first source task has
    // finished, the big file's reader is still running, so the leader dies mid-job however slow
    // the machine (with 18 even files, every reader finished at about the same time and the job
    // could end under the old leader: seen at load 17).
    const small = await generateTextFiles(join(dir, 'in'), { files: 8, linesPerFile: 20, seed: 15, prefix: 'a' });
    const big = await generateTextFiles(join(dir, 'in'), { files: 1, linesPerFile: 300, seed: 16, prefix: 'b' });
    const files = [...small, ...big];
    const out = join(dir, 'out');
    const { jobId } = await cluster.submit('examples/wordcount.ts', [
      '--input',
      join(dir, 'in'),
      '--output',
      out,
      '--record-delay-ms',
      '50',
    ]);
    const watchCommand = `'${process.execPath}' '${REBOUND_BIN}' watch ${jobId} --cluster '${cluster.workdir}' --poll-interval '100 ms'; echo "[watch exited $?]"`;
    for (const w of WIDTHS) {
      tmux.start(`w${w}`, w, `cd '${REPO_ROOT}' && ${watchCommand}`);
      if (process.env.REBOUND_TMUX_DUMP === '1')
        tmux.run(['pipe-pane', '-t', `w${w}`, `cat > '${join(dir, `raw-${w}.txt`)}'`]);
    }

    const screens = new Map<number, string[][]>(WIDTHS.map((w) => [w, []]));
    const captureAll = (): void => {
      for (const w of WIDTHS) {
        const screen = tmux.capture(`w${w}`);
        const seen = screens.get(w)!;
        if (seen.length === 0 || seen.at(-1)!.join('\n') !== screen.join('\n')) seen.push(screen);
      }
    };
    const showing = (w: number, pattern: RegExp): boolean => tmux.capture(`w${w}`).some((l) => pattern.test(l));

    // Both panes draw the job running under the first leader before it dies.
    await waitFor(
      () => (captureAll(), WIDTHS.every((w) => showing(w, /RUNNING .*leader jm-\d \(epoch 1\)/))),
      60_000,
      'both panes to show the job RUNNING under epoch 1',
    );
    await waitFor(
      async () => (captureAll(), (await cluster.status(jobId)).vertices[0]!.tasks.finished >= 1),
      60_000,
      'a first finished source task',
    );
    // In-process (no CLI start-up between the check above and the kill).
    const killed = await killLeader(cluster);
    try {
      await waitFor(
        () => (captureAll(), WIDTHS.every((w) => showing(w, /\[watch exited \d+\]/))),
        90_000,
        'watch to exit in both panes',
        { intervalMs: 40 },
      );
      captureAll();
    } finally {
      // Every distinct screen with REBOUND_TMUX_DUMP=1; the last ones always when watch did not end.
      for (const [w, all] of screens) {
        const shown = process.env.REBOUND_TMUX_DUMP === '1' ? all : all.slice(-1);
        process.stderr.write(
          `\n===== ${w} columns: ${all.length} screens =====\n${shown.map((s) => s.join('\n')).join('\n-----\n')}\n`,
        );
      }
    }
    const final = await cluster.status(jobId);
    expect(final.state).toBe('FINISHED');
    expect(final.leaderEpoch).toBeGreaterThan(killed.epoch);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    // `status` tells the same failover in a sentence, with the subtasks that ran again (TaskManager logs).
    const human = await cluster.rebound(['status', jobId]);
    expect(human.stdout).toMatch(
      /Survived 1 JobMaster failover:\n {2}Failover 1 \(epoch \d+\): leader lost [\d.]+ (ms|s|min)( [\d]+ s)? ago → elected after /,
    );
    expect(human.stdout).toMatch(/\n {4}ran again: (Source: TextFiles #\d+|nothing)/);

    for (const w of WIDTHS) {
      const all = screens.get(w)!;
      for (const screen of all) {
        for (const line of screen)
          expect(displayWidth(line), `line wider than ${w} columns:\n${line}`).toBeLessThanOrEqual(w);
        // One live block: a header left behind by an incomplete redraw would make two.
        expect(screen.filter((l) => HEADER.test(l)).length, screen.join('\n')).toBeLessThanOrEqual(1);
      }
      const text = all.map((s) => s.join('\n'));
      expect(
        text.some((s) => /NO LEADER|TAKING OVER/.test(s)),
        `${w}: the leaderless gap was never shown`,
      ).toBe(true);
      // Once the gap was shown, the old leader never appears in the header again.
      const gapAt = text.findIndex((s) => /NO LEADER|TAKING OVER/.test(s));
      expect(
        text
          .slice(gapAt)
          .some((s) => s.split('\n').some((l) => HEADER.test(l) && l.includes(`epoch ${killed.epoch})`))),
      ).toBe(false);

      const last = all.at(-1)!;
      const joined = last.join('\n').replace(/\n {4}/g, ' ');
      expect(last.filter((l) => HEADER.test(l))).toHaveLength(1);
      const header = last.find((l) => HEADER.test(l))!;
      expect(header).toContain('FINISHED');
      expect(header).toContain(`(epoch ${final.leaderEpoch})`);
      expect(joined).toMatch(
        new RegExp(`Failover 1 \\(epoch ${final.leaderEpoch}\\): leader lost [\\d.]+ (ms|s) ago → elected after`),
      );
      expect(joined).toContain(`job ${jobId} FINISHED`);
      expect(joined).toContain('[watch exited 0]');
      for (const v of final.vertices) {
        const row = last.find(
          (l) =>
            l.includes(`${v.tasks.finished}/${v.parallelism}  FINISHED`) && l.startsWith(`  ${v.name.slice(0, 10)}`),
        );
        expect(row, `row of ${v.name} in\n${last.join('\n')}`).toBeDefined();
      }
    }
  });
});
