/**
 * Summarises .cpuprofile files (from `run.ts --profile DIR`): per file, the functions with the
 * most self time and the most inclusive time, as percentages of the sampled time.
 *   npx tsx bench/throughput/profile-summary.ts DIR [--top 25] [--match taskmanager]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function frameName(f: CallFrame): string {
  const file = f.url ? relative(process.cwd(), f.url.replace(/^file:\/\//, '')).replace(/^(\.\.\/)+/, '') : '';
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}:${f.lineNumber + 1}` : ''}`;
}

export function summarise(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const name = frameName(node.callFrame);
    total += us;
    if (node.callFrame.functionName === '(idle)') idle += us;
    self.set(name, (self.get(name) ?? 0) + us);
    // Inclusive: once per distinct function on the stack (recursion counted once).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = frameName(byId.get(cur)!.callFrame);
      if (seen.has(n)) continue;
      seen.add(n);
      inclusive.set(n, (inclusive.get(n) ?? 0) + us);
    }
  }
  const busy = total - idle;
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const lines = [
    `sampled ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s (percentages of busy)`,
  ];
  const rank = (m: Map<string, number>): [string, number][] =>
    [...m]
      .filter(([n]) => !n.startsWith('(idle)') && !n.startsWith('(root)') && !n.startsWith('(program)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top);
  lines.push('  self:');
  for (const [n, us] of rank(self)) lines.push(`    ${pct(us)}  ${n}`);
  lines.push(
    `    ${pct(self.get('(program)') ?? 0)}  (program)   ${pct(self.get('(garbage collector)') ?? 0)}  (garbage collector)`,
  );
  lines.push('  inclusive:');
  for (const [n, us] of rank(inclusive)) lines.push(`    ${pct(us)}  ${n}`);
  return lines;
}

function main(): void {
  const { values, positionals } = parseArgs({
    options: { top: { type: 'string', default: '25' }, match: { type: 'string', default: '' } },
    allowPositionals: true,
    strict: true,
  });
  const dir = positionals[0];
  if (!dir) throw new Error('usage: profile-summary.ts DIR [--top N] [--match TEXT]');
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.cpuprofile') && n.includes(values.match))
    .sort()) {
    const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile;
    process.stdout.write(`== ${basename(name)}\n${summarise(profile, Number(values.top)).join('\n')}\n\n`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
