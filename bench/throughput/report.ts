/** The Markdown summary of a throughput run (bench/results/throughput.md). */
import type { CorpusResult } from './results.js';

interface ReportInput {
  readonly measuredAt: string;
  readonly command: string;
  readonly machine: { cpus: number; cpuModel: string; node: string };
  readonly load: {
    atStart: number;
    atEnd: number;
    max: number;
    maxLoadForTargets: number;
    foreignCores?: number;
    maxForeignCores: number;
  };
  readonly targets: { ratioAtLeast: number; cpuFactorAtMost: number };
  readonly corpora: readonly CorpusResult[];
  readonly profile: readonly { file: string; summary: readonly string[] }[];
}

const f2 = (n: number | null | undefined): string => (n === null || n === undefined ? '-' : n.toFixed(2));

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export function markdownReport(doc: ReportInput, verdict: string): string {
  const out: string[] = [
    '# Throughput: wordcount, cluster vs one plain Node process',
    '',
    `Measured ${doc.measuredAt} on ${doc.machine.cpus} x ${doc.machine.cpuModel}, Node ${doc.machine.node}, with \`${doc.command}\`.`,
    doc.load.foreignCores !== undefined
      ? `CPU taken by processes outside the benchmark (and steal): ${f2(doc.load.foreignCores)} cores on average (targets are judged only at or below ${doc.load.maxForeignCores}). ` +
        `Load average (1 min, the benchmark's own processes included): ${f2(doc.load.atStart)} at start, ${f2(doc.load.atEnd)} at end, ${f2(doc.load.max)} at most.`
      : `Load average (1 min): ${f2(doc.load.atStart)} at start, ${f2(doc.load.atEnd)} at end, ${f2(doc.load.max)} at most ` +
        `(targets are judged only at or below ${doc.load.maxLoadForTargets}).`,
    '',
    `Target (large corpus): median ratio >= ${doc.targets.ratioAtLeast} and cluster CPU per MB <= ${doc.targets.cpuFactorAtMost}x the single process's, outputs exact: **${verdict}**.`,
    '',
    'Ratio = single-process wall time (node start-up included) / `rebound submit` wall time (CLI start-up, bundling, scheduling, running, committing; cluster start-up excluded). Above 1 the cluster is faster.',
    '',
  ];
  for (const c of doc.corpora) {
    out.push(
      `## ${c.name} corpus: ${c.input.mb} MB, vocabulary ${c.input.vocabulary} (${c.input.distinctWords} distinct words, ${c.input.words} words)`,
      '',
      table(
        [
          'round',
          'order',
          'single s',
          'cluster s',
          'job s',
          'ratio',
          'single CPU s',
          'cluster CPU s (jm / tm / tm)',
          'outputs',
        ],
        c.rounds.map((r) => [
          String(r.round),
          r.order,
          f2(r.baseline.wallSeconds),
          f2(r.cluster.submitSeconds),
          f2(r.cluster.jobSeconds),
          f2(r.ratio),
          f2(r.baseline.cpuSeconds),
          `${f2(r.cluster.cpuSeconds)} (${Object.values(r.cluster.daemons)
            .map((d) => f2(d.cpuSeconds))
            .join(' / ')})`,
          r.outputsIdentical ? 'identical' : 'DIFFER',
        ]),
      ),
      '',
      `Median ratio **${f2(c.medianRatio)}**. CPU seconds per MB: single process ${c.baselineCpuSecondsPerMb.toFixed(3)}, ` +
        `cluster daemons ${c.clusterCpuSecondsPerMb === null ? '-' : c.clusterCpuSecondsPerMb.toFixed(3)} (**${f2(c.cpuFactor)}x**).`,
      `Peak RSS (MB): ${Object.entries(c.peakRssMb)
        .map(([k, v]) => `${k} ${v === null ? '-' : Math.round(v)}`)
        .join(', ')}.`,
      '',
    );
  }
  if (doc.profile.length > 0) {
    out.push('## Profile (one extra, untimed cluster run on the first corpus; top functions by self time)', '');
    for (const p of doc.profile) out.push(`### ${p.file}`, '', '```', ...p.summary, '```', '');
  }
  return `${out.join('\n')}\n`;
}
