import type { Command } from 'commander';

/** Commands whose first argument is a job file and whose remaining arguments belong to the job. */
export const JOB_FILE_COMMANDS: ReadonlySet<string> = new Set(['submit', 'run', 'info']);

type Arity = 'flag' | 'value' | undefined;

function arityOf(cmd: Command, token: string): Arity {
  if (token === '-h' || token === '--help') return 'flag';
  const opt = cmd.options.find((o) => o.short === token || o.long === token);
  if (!opt) return undefined;
  return opt.required || opt.optional ? 'value' : 'flag';
}

/** True when `tokens` are all options of `cmd` with their values (e.g. `-p 3 --json`). */
function allOptionsOf(cmd: Command, tokens: readonly string[]): boolean {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const eq = t.indexOf('=');
    if (t.startsWith('--') && eq > 0) {
      if (arityOf(cmd, t.slice(0, eq)) !== 'value') return false;
      continue;
    }
    // `-Dkey=value`, `-p3`: a short option with its value attached.
    if (/^-[^-]./.test(t) && arityOf(cmd, t.slice(0, 2)) === 'value') continue;
    const arity = arityOf(cmd, t);
    if (arity === undefined) return false;
    if (arity === 'value') i++;
  }
  return true;
}

/**
 * Everything after the job file goes to the job, as with `flink run x.jar args`: a `--` is put
 * right after the job file so that the parser leaves the job's `--input` alone. Still accepted:
 * `--` right after the file, and the older form with options of `submit`/`info` between the file
 * and a `--` (`info x.ts -p 3 --json -- --input in`), when every token there is one of them.
 * `tokens` are the arguments after the command name.
 */
export function routeJobArgs(tokens: readonly string[], cmd: Command): string[] {
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    if (t === '--') return [...tokens];
    if (!t.startsWith('-') || t === '-') break;
    i += !t.includes('=') && arityOf(cmd, t) === 'value' ? 2 : 1;
  }
  if (i >= tokens.length - 1) return [...tokens];
  const rest = tokens.slice(i + 1);
  if (rest[0] === '--') return [...tokens];
  const dashes = rest.indexOf('--');
  if (dashes > 0 && allOptionsOf(cmd, rest.slice(0, dashes))) return [...tokens];
  return [...tokens.slice(0, i + 1), '--', ...rest];
}
