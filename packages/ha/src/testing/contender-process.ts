import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** A contender script run as its own process (contender.ts, etcd-contender.ts); its stdout lines are kept and can be awaited. */
export class ContenderProcess {
  readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];
  readonly proc: ChildProcess;
  private stderr = '';

  constructor(
    readonly id: string,
    script: string,
    args: readonly string[],
    options: { readonly stdin: boolean; readonly env?: NodeJS.ProcessEnv },
  ) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: repoRoot,
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      ...(options.env ? { env: options.env } : {}),
    });
    let buf = '';
    this.proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        this.lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
  }

  /** The first line matching `re` at or after line index `from`. */
  async line(re: RegExp, from: number, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.slice(from).find((l) => re.test(l));
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `${this.id}: no line matching ${re} within ${timeoutMs} ms; stdout=${JSON.stringify(this.lines)} stderr=${this.stderr}`,
        );
      await new Promise<void>((res) => {
        const t = setTimeout(res, left);
        this.waiters.push(() => {
          clearTimeout(t);
          res();
        });
      });
    }
  }

  grants(): number[] {
    return this.lines.flatMap((l) => (l.startsWith('GRANTED ') ? [Number(l.slice(8))] : []));
  }

  signal(sig: NodeJS.Signals): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(sig);
  }
}
