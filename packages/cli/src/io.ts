import type { TextOutput } from './progress.js';

/** Where a command writes, and its environment: injected so commands run inside tests. */
export interface CliIo {
  readonly stdout: TextOutput;
  readonly stderr: TextOutput;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

export function printLines(out: TextOutput, lines: readonly string[]): void {
  if (lines.length > 0) out.write(`${lines.join('\n')}\n`);
}

export function printJson(out: TextOutput, value: unknown): void {
  out.write(`${JSON.stringify(value)}\n`);
}
