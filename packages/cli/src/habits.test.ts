import { describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';
import { runCli } from './program.js';

/** Flink's CLI habits, at the parser: what each command line is handed to the handlers as. */
async function parse(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env,
    cwd: '/work',
  };
  const calls: { name: string; opts: Record<string, unknown> }[] = [];
  const handlers = new Proxy({} as CommandHandlers, {
    get: (_t, name) => (opts: Record<string, unknown>) => {
      calls.push({ name: String(name), opts });
      return Promise.resolve(0);
    },
  });
  const code = await runCli(argv, io, handlers);
  return { code, stdout, stderr, calls, opts: calls[0]?.opts };
}

describe('Flink CLI habits', () => {
  it('run is submit; everything after the job file goes to the job', async () => {
    const r = await parse(['run', '-d', 'wc.ts', '--input', 'in', '-p', '3', '--json']);
    expect(r.calls.map((c) => c.name)).toEqual(['submit']);
    expect(r.opts).toMatchObject({ jobFile: 'wc.ts', detached: true, json: false });
    expect(r.opts?.jobArgs).toEqual(['--input', 'in', '-p', '3', '--json']);
    expect(r.opts?.parallelism).toBeUndefined();
  });

  it('a -- after the job file stays accepted, and so do our options between the file and --', async () => {
    expect((await parse(['info', 'wc.ts', '--', '--input', 'in'])).opts?.jobArgs).toEqual(['--input', 'in']);
    const old = await parse(['info', 'wc.ts', '-p', '3', '--json', '-Drpc.timeout=1s', '--', '--input', 'in']);
    expect(old.opts).toMatchObject({
      parallelism: 3,
      json: true,
      dynamic: ['rpc.timeout=1s'],
      jobArgs: ['--input', 'in'],
    });
    // Not all ours before the --: all the job's, the -- included.
    const job = await parse(['submit', 'wc.ts', '--input', 'a', '--', 'b']);
    expect(job.opts?.jobArgs).toEqual(['--input', 'a', '--', 'b']);
  });

  it('-m/--jobmanager is --address', async () => {
    expect((await parse(['list', '-m', 'jm:6123'])).opts).toMatchObject({ address: 'jm:6123' });
    expect((await parse(['run', '--jobmanager', 'jm:6123', 'x.ts'])).opts).toMatchObject({ address: 'jm:6123' });
    const both = await parse(['list', '-m', 'a:1', '--address', 'b:2']);
    expect([both.code, both.stderr]).toEqual([
      2,
      'rebound: --address b:2 and --jobmanager a:1 name different places; give one of them (see --help)\n',
    ]);
  });

  it('-D with a misspelt key suggests the key, with exit 2 as every usage error', async () => {
    const r = await parse(['local', 'up', '-D', 'heartbeat.timout=5s']);
    expect([r.code, r.stderr, r.calls]).toEqual([
      2,
      "rebound: -D heartbeat.timout=5s: unknown configuration key 'heartbeat.timout' (did you mean 'heartbeat.timeout'?); see 'rebound config' for the known keys\n",
      [],
    ]);
    const bad = await parse(['submit', '-D', 'heartbeat.timeout=soon', 'x.ts']);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      "rebound: -D heartbeat.timeout: 'soon' is not a duration; use e.g. '500 ms', '30 s' or '5 min'\n",
    ]);
    expect((await parse(['info', '-D', 'novalue', 'x.ts'])).stderr).toBe('rebound: -D novalue: expected key=value\n');
  });

  it('help of an unknown command is an error line', async () => {
    expect(await parse(['help', 'stauts'])).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "rebound: no command 'stauts' (did you mean 'status'?); 'rebound help' lists the commands\n",
    });
    expect((await parse(['help', 'local', 'upp'])).stderr).toBe(
      "rebound: no command 'local upp' (did you mean 'up'?); 'rebound help' lists the commands\n",
    );
    expect((await parse(['help', 'status'])).code).toBe(0);
    // A subcommand's own help, not its group's.
    const nested = await parse(['help', 'local', 'kill-leader']);
    expect([nested.code, nested.stderr]).toEqual([0, '']);
    expect(nested.stdout).toMatch(/^Usage: rebound local kill-leader \[options\]\n/);
    expect(nested.stdout).toContain('--no-wait');
    expect((await parse(['help', 'submit'])).stdout).toMatch(/^Usage: rebound submit\|run \[options\]/);
  });

  it('REBOUND_PROPERTIES that does not parse stops every command, naming the line', async () => {
    const r = await parse(['list'], { REBOUND_PROPERTIES: 'rpc.timeout: 1 s\ngarbage' });
    expect([r.code, r.stderr, r.calls]).toEqual([
      2,
      "rebound: REBOUND_PROPERTIES line 2 'garbage': expected 'key: value'\n",
      [],
    ]);
    const typo = await parse(['config'], { REBOUND_PROPERTIES: 'heartbeat.timout: 5 s' });
    expect(typo.stderr).toMatch(/^rebound: REBOUND_PROPERTIES line 1 .*did you mean 'heartbeat\.timeout'/);
  });

  it('--cluster names the cluster everywhere; --workdir stays accepted', async () => {
    expect((await parse(['local', 'status', '--cluster', 'c'])).opts).toMatchObject({ workdir: 'c' });
    expect((await parse(['local', 'down', '--workdir', 'w'])).opts).toMatchObject({ workdir: 'w' });
    expect((await parse(['logs', '--cluster', 'c'])).opts).toMatchObject({ workdir: 'c' });
    expect((await parse(['status', 'abcd', '--workdir', 'w'])).opts).toMatchObject({ cluster: 'w' });
    expect((await parse(['events', 'abcd', '--workdir', 'w'])).opts).toMatchObject({ cluster: 'w' });
    expect((await parse(['local', 'kill-leader', '--cluster', 'a', '--workdir', 'b'])).code).toBe(2);
  });
});
