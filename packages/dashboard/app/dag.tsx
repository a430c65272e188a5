import dagre from '@dagrejs/dagre';
import type { JobDoc } from './api.js';

const W = 230;
const H = 70;
const COLORS: Record<string, string> = {
  FINISHED: '#1f9d55',
  RUNNING: '#2563eb',
  FAILED: '#dc2626',
  CANCELED: '#dc2626',
  SCHEDULED: '#9ca3af',
  CREATED: '#9ca3af',
};

/** The job's vertices and edges laid out left to right by dagre, with live per-vertex progress. */
export function Dag({ job }: { job: JobDoc }) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 70, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  const vertices = new Map(job.vertices.map((v) => [v.id, v]));
  for (const n of job.plan.nodes) g.setNode(n.id, { width: W, height: H });
  for (const n of job.plan.nodes)
    for (const i of n.inputs ?? []) g.setEdge(i.id, n.id, { label: i.ship_strategy, width: 60, height: 14 });
  dagre.layout(g);
  const size = g.graph();
  return (
    <svg width={Math.max(300, size.width ?? 0)} height={Math.max(90, size.height ?? 0)} data-testid="dag">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
          <path d="M0,0 L10,5 L0,10 z" fill="#9ca3af" />
        </marker>
      </defs>
      {g.edges().map((e) => {
        const ed = g.edge(e) as { points: { x: number; y: number }[]; x?: number; y?: number; label?: string };
        const d = ed.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
        return (
          <g key={`${e.v}-${e.w}`}>
            <path d={d} fill="none" stroke="#9ca3af" stroke-width="1.5" marker-end="url(#arrow)" />
            {ed.label && ed.x !== undefined && (
              <text x={ed.x} y={(ed.y ?? 0) - 4} font-size="10" text-anchor="middle" fill="#6b7280">
                {ed.label}
              </text>
            )}
          </g>
        );
      })}
      {job.plan.nodes.map((n) => {
        const p = g.node(n.id);
        const v = vertices.get(n.id);
        const total = v?.parallelism ?? 0;
        const done = v?.tasks.FINISHED ?? 0;
        const running = (v?.tasks.RUNNING ?? 0) + (v?.tasks.DEPLOYING ?? 0);
        const x = p.x - W / 2;
        const y = p.y - H / 2;
        const color = COLORS[v?.status ?? 'CREATED'] ?? '#9ca3af';
        return (
          <g key={n.id} data-testid="dag-vertex" data-vertex={n.id}>
            <rect x={x} y={y} width={W} height={H} rx="6" fill="#fff" stroke={color} stroke-width="2" />
            <text x={x + 8} y={y + 17} font-size="12" font-weight="600">
              {(v?.name ?? n.description).slice(0, 34)}
            </text>
            <text x={x + 8} y={y + 34} font-size="11" fill="#6b7280">
              {total > 0 ? `parallelism ${total}` : 'parallelism not decided yet'} ·{' '}
              <tspan fill={color}>{v?.status ?? 'CREATED'}</tspan>
            </text>
            <rect x={x + 8} y={y + 44} width={W - 16} height="8" rx="4" fill="#e5e7eb" />
            {total > 0 && (
              <rect x={x + 8} y={y + 44} width={((W - 16) * done) / total} height="8" rx="4" fill="#1f9d55" />
            )}
            {total > 0 && running > 0 && (
              <rect
                x={x + 8 + ((W - 16) * done) / total}
                y={y + 44}
                width={((W - 16) * running) / total}
                height="8"
                fill="#93c5fd"
              />
            )}
            <text x={x + 8} y={y + 65} font-size="10" fill="#6b7280">
              {total > 0 ? `${done}/${total} finished${running ? `, ${running} running` : ''}` : ''}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
