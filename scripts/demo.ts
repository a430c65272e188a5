/**
 * `npm run demo`: a local cluster (2 JobMasters, 3 TaskManagers) runs a slow wordcount with batch
 * job recovery enabled; when about half of its tasks are finished the leading JobMaster is
 * SIGKILLed. The standby takes over, replays the job's events, reuses the finished work, adopts
 * the source tasks that kept running through the kill (execution.batch.job-recovery.
 * keep-running-tasks, set explicitly here), and the output is checked against a count computed
 * here, independently.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ClusterClient, groupSubtasks, jobStatusToJson, recoverySentence } from '@rebound/cli';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const work = join(root, '.rebound-demo');
const cli = join(root, 'bin/rebound.js');

const SETTINGS = {
  'execution.batch.job-recovery.enabled': 'true',
  // Issue 21: running tasks carry on through the failover instead of starting over.
  'execution.batch.job-recovery.keep-running-tasks': 'true',
  'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
  'job-event.store.write-buffer.flush-interval': '200 ms',
  'heartbeat.interval': '500 ms',
  'heartbeat.timeout': '5 s',
  'high-availability.lease.timeout': '2 s',
  'high-availability.lease.renew-interval': '400 ms',
  'high-availability.lease.poll-interval': '200 ms',
  'restart-strategy.fixed-delay.delay': '200 ms',
};

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (s = ''): void => console.log(s);

async function rebound(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [cli, ...args], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

interface VertexJson {
  name: string;
  parallelism: number;
  state: string;
  tasks: { finished: number; running: number };
}
interface StatusJson {
  state: string;
  leaderEpoch: number;
  vertices: VertexJson[];
  recoveries?: { epoch: number; runningTasksAdopted: number; executionsReset: number }[];
}

let client: ClusterClient | undefined;

async function status(jobId: string): Promise<StatusJson | undefined> {
  client ??= await ClusterClient.connect({ cluster: work });
  try {
    return jobStatusToJson(await client.getJobStatus(jobId, { failoverTimeoutMs: 0 })) as unknown as StatusJson;
  } catch (err) {
    if (process.env.REBOUND_DEMO_DEBUG) console.error(`status: ${err instanceof Error ? err.message : String(err)}`);
    return undefined; // no leader right now
  }
}

/**
 * The demo's own tokenizer, deliberately not the job's `wordsOf`: runs of letters and digits,
 * character by character, each word lower-cased as a whole (so a final Σ becomes ς).
 */
function demoTokens(text: string): string[] {
  const words: string[] = [];
  let word = '';
  for (const ch of text) {
    if (/[\p{L}\p{N}]/u.test(ch)) {
      word += ch;
    } else if (word) {
      words.push(word.toLowerCase());
      word = '';
    }
  }
  if (word) words.push(word.toLowerCase());
  return words;
}

/** Seeded text, the same on every run; returns the word counts the job must produce. */
function generateInput(dir: string, files: number, lines: number): Map<string, number> {
  const vocabulary =
    'the rebound flink batch job master task manager partition recovery epoch leader shuffle split source sink café naïve über λόγος мир 数据 42 x1'.split(
      ' ',
    );
  let state = 42;
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
  const counts = new Map<string, number>();
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < files; f++) {
    const out: string[] = [];
    for (let l = 0; l < lines; l++) {
      const n = 3 + (next() % 8);
      const words: string[] = [];
      for (let w = 0; w < n; w++) words.push(vocabulary[next() % vocabulary.length]!);
      const line = words.join(next() % 3 === 0 ? ', ' : ' ');
      const written = next() % 5 === 0 ? line.toUpperCase() : line;
      out.push(written);
      for (const w of demoTokens(written)) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    writeFileSync(join(dir, `part-${String(f).padStart(3, '0')}.txt`), out.join('\n') + '\n');
  }
  return counts;
}

function readOutput(dir: string): Map<string, number> {
  const got = new Map<string, number>();
  for (const name of readdirSync(dir).filter((n) => n.startsWith('part-'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const [w, c] = line.split('\t');
      if (got.has(w!)) throw new Error(`word '${w}' appears twice in the output`);
      got.set(w!, Number(c));
    }
  }
  return got;
}

/** task.deploy lines of the TaskManager logs: how often each subtask was deployed. */
function deployments(jobId: string): Map<string, number> {
  const counts = new Map<string, number>();
  const logs = join(work, 'logs');
  for (const name of readdirSync(logs).filter((n) => n.startsWith('tm-') && n.endsWith('.log'))) {
    for (const line of readFileSync(join(logs, name), 'utf8').split('\n')) {
      if (!line.includes('"task.deploy"') || !line.includes(jobId)) continue;
      const e = JSON.parse(line) as { vertexName: string; subtask: number };
      const key = `${e.vertexName}#${e.subtask}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

function progressLine(s: StatusJson): string {
  return s.vertices
    .map(
      (v) =>
        `${v.name.split(' -> ')[0]} ${v.tasks.finished}/${v.parallelism || '?'}${v.tasks.running > 0 ? ` (${v.tasks.running} running)` : ''}`,
    )
    .join(' | ');
}

const finishedTasks = (s: StatusJson): number => s.vertices.reduce((n, v) => n + v.tasks.finished, 0);

async function main(): Promise<void> {
  if (existsSync(join(work, 'cluster.json')))
    spawnSync(process.execPath, [cli, 'local', 'down', '--workdir', work], { stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
  const input = join(work, 'input');
  const output = join(work, 'output');
  say(bold('1. Generating input') + ': 18 text files of seeded words');
  const expected = generateInput(input, 18, 800);

  say(
    bold('2. Starting a local cluster') +
      ': 2 JobMasters (leader + standby), 3 TaskManagers with 2 slots each; batch job recovery on',
  );
  const dArgs = Object.entries(SETTINGS).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
  await rebound([
    'local',
    'up',
    '--workdir',
    work,
    '--jobmasters',
    '2',
    '--taskmanagers',
    '3',
    '--slots',
    '2',
    ...dArgs,
  ]);
  say(await rebound(['local', 'status', '--workdir', work]));

  say(bold('3. Submitting a slow wordcount') + ' (each source subtask sleeps 12 ms per line)');
  const { jobId } = JSON.parse(
    await rebound([
      'submit',
      'examples/wordcount.ts',
      '--detached',
      '--json',
      '--cluster',
      work,
      '--',
      '--input',
      input,
      '--output',
      output,
      '--record-delay-ms',
      '12',
    ]),
  ) as { jobId: string };
  say(`   job ${jobId}`);

  let killed = false;
  let killEpoch = 0;
  let finishedAtKill = 0;
  let lowestAfterKill = Number.POSITIVE_INFINITY;
  let toldAdoption = false;
  let last = '';
  const deadline = Date.now() + 240_000;
  let s: StatusJson | undefined;
  for (;;) {
    if (Date.now() > deadline) throw new Error('the job did not finish within 4 minutes');
    s = await status(jobId);
    if (s && killed && s.state === 'CREATED') {
      // The new leader answers before it has restored the job: not a state worth a progress line.
      if (last !== 'loading') say('   ...the new leader is loading the job from the JobGraphStore');
      last = 'loading';
    } else if (s) {
      const line = `   ${s.state.padEnd(11)} ${progressLine(s)}`;
      if (process.env.REBOUND_DEMO_DEBUG) console.error(new Date().toISOString(), line);
      if (line !== last) say(line);
      last = line;
      if (killed && s.leaderEpoch > killEpoch && s.vertices.length > 0)
        lowestAfterKill = Math.min(lowestAfterKill, finishedTasks(s));
      const rec = s.recoveries?.find((r) => r.epoch > killEpoch);
      if (killed && rec && !toldAdoption) {
        say(
          `   ...recovered under epoch ${rec.epoch}: ${rec.runningTasksAdopted} running task${rec.runningTasksAdopted === 1 ? '' : 's'} adopted ` +
            `(kept running through the kill, not redeployed), ${rec.executionsReset} finished task${rec.executionsReset === 1 ? '' : 's'} rerun`,
        );
        toldAdoption = true;
      }
      const src = s.vertices[0]!;
      if (!killed && src.parallelism > 0 && src.tasks.finished >= Math.ceil(src.parallelism / 2)) {
        killEpoch = s.leaderEpoch;
        finishedAtKill = finishedTasks(s);
        // --no-wait: this loop itself shows the leaderless time and the takeover.
        const { pid } = JSON.parse(
          await rebound(['local', 'kill-leader', '--no-wait', '--json', '--workdir', work]),
        ) as { pid: number };
        say(
          bold(`4. SIGKILL of the leading JobMaster (pid ${pid})`) +
            ` with ${src.tasks.finished}/${src.parallelism} source tasks finished, ${src.tasks.running} running`,
        );
        killed = true;
      }
      if (['FINISHED', 'FAILED', 'CANCELED'].includes(s.state)) break;
    } else if (killed) {
      if (last !== 'waiting') say('   ...no leader: the standby is taking over');
      last = 'waiting';
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (s.state !== 'FINISHED') throw new Error(`the job ended ${s.state}`);

  say();
  say(bold('5. Recovery report') + ' (rebound status shows it too; raw fields with --json)');
  const finalStatus = await client!.getJobStatus(jobId);
  const now = Date.now();
  for (const [i, r] of finalStatus.recoveries.entries()) say(`   ${recoverySentence(r, i, now)}`);
  const deploys = deployments(jobId);
  const rerun = [...deploys].filter(([, n]) => n > 1).map(([k]) => k);
  const rerunSubtasks = rerun.map((k) => ({
    vertex: k.slice(0, k.lastIndexOf('#')),
    subtask: Number(k.slice(k.lastIndexOf('#') + 1)),
  }));
  say(`   subtasks that ran again: ${rerun.length === 0 ? 'none' : groupSubtasks(rerunSubtasks)}`);
  const adopted = finalStatus.recoveries.reduce((n, r) => n + r.running_tasks_adopted, 0);
  say(
    `   running tasks adopted: ${adopted}; finished tasks at the kill ${finishedAtKill}, lowest count the new leader showed ` +
      `${Number.isFinite(lowestAfterKill) ? lowestAfterKill : '-'}: ${lowestAfterKill >= finishedAtKill ? 'progress never went back' : 'progress WENT BACK'}`,
  );

  say();
  say(bold('6. Checking the output') + ' against a count computed independently');
  const got = readOutput(output);
  let wrong = 0;
  for (const [w, c] of expected) if (got.get(w) !== c) wrong++;
  for (const w of got.keys()) if (!expected.has(w)) wrong++;
  const top = [...got].sort((a, b) => b[1] - a[1]).slice(0, 5);
  say(`   ${got.size} distinct words; top: ${top.map(([w, c]) => `${w}=${c}`).join(', ')}`);
  client?.close();
  await rebound(['local', 'down', '--workdir', work]);
  if (wrong > 0) {
    say(`   WRONG: ${wrong} words differ`);
    process.exit(1);
  }
  say('   output is correct: every count matches');
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  spawnSync(process.execPath, [cli, 'local', 'down', '--workdir', work], { stdio: 'ignore' });
  process.exit(1);
});
