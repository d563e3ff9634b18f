// The frontier over ticks: per fixed point the iterations each tick took and whether it
// converged; per window its waterline, the windows each tick closed and its late rows.
// A chart and the latest ticks as a table, per node.

import './profile.css';
import type { FrontierHistory, FrontierNode } from './api';
import { LATE_COLOUR, SERIES_COLOUR } from './ProfilePanel';
import { SeriesChart } from './SeriesChart';

/** Rows of the table: the newest ticks first. */
export const TABLE_TICKS = 8;

export function waterlineText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? value.replace('T', ' ') : String(value);
}

function newest<T>(ticks: number[], pick: (i: number) => T): { tick: number; value: T }[] {
  const out = [];
  for (let i = ticks.length - 1; i >= 0 && out.length < TABLE_TICKS; i--) out.push({ tick: ticks[i]!, value: pick(i) });
  return out;
}

function FixedPointFrontier({ node, ticks }: { node: FrontierNode; ticks: number[] }) {
  const iterations = node.iterations ?? [];
  const converged = node.converged ?? [];
  return (
    <div className="card frontier-node" data-testid={`frontier-${node.node}`}>
      <h4>
        <code>{node.node}</code> <span className="muted small">fixed point: iterations per tick</span>
      </h4>
      <SeriesChart ticks={ticks} series={[{ label: 'iterations', values: iterations, colour: SERIES_COLOUR, style: 'bars' }]} testId={`frontier-chart-${node.node}`} height={220} />
      <table className="frontier-table" data-testid={`frontier-table-${node.node}`}>
        <thead>
          <tr>
            <th>tick</th>
            <th>iterations</th>
            <th>converged</th>
          </tr>
        </thead>
        <tbody>
          {newest(ticks, (i) => ({ k: iterations[i], ok: converged[i] })).map(({ tick, value }) => (
            <tr key={tick} data-tick={tick} data-iterations={value.k} data-converged={String(value.ok)}>
              <td>{tick}</td>
              <td>{value.k}</td>
              <td>{value.ok ? '✓ converged' : 'not converged'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function WindowFrontier({ node, ticks }: { node: FrontierNode; ticks: number[] }) {
  const closed = node.windows_closed ?? [];
  const late = node.late_rows ?? [];
  const waterline = node.waterline ?? [];
  return (
    <div className="card frontier-node" data-testid={`frontier-${node.node}`}>
      <h4>
        <code>{node.node}</code> <span className="muted small">{node.kind.replace('_', ' ')}: waterline {waterlineText(waterline[waterline.length - 1])}</span>
      </h4>
      <SeriesChart
        ticks={ticks}
        series={[
          { label: 'windows closed', values: closed, colour: SERIES_COLOUR, style: 'bars' },
          { label: 'late rows', values: late, colour: LATE_COLOUR, style: 'points' },
        ]}
        testId={`frontier-chart-${node.node}`}
        height={220}
      />
      <table className="frontier-table" data-testid={`frontier-table-${node.node}`}>
        <thead>
          <tr>
            <th>tick</th>
            <th>waterline</th>
            <th>windows closed</th>
            <th>late rows</th>
          </tr>
        </thead>
        <tbody>
          {newest(ticks, (i) => ({ w: waterline[i], c: closed[i] ?? 0, l: late[i] ?? 0 })).map(({ tick, value }) => (
            <tr key={tick} data-tick={tick} data-closed={value.c} data-late={value.l}>
              <td>{tick}</td>
              <td>{waterlineText(value.w)}</td>
              <td>{value.c}</td>
              <td className={value.l ? 'late-tag' : undefined}>{value.l}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function FrontierPanel({ history }: { history: FrontierHistory | null }) {
  if (!history) return <p className="muted small">No ticks yet.</p>;
  if (history.nodes.length === 0) return <p className="muted small" data-testid="frontier-none">This circuit has no fixed point and no window.</p>;
  return (
    <div className="frontier-panel" data-testid="frontier-panel">
      {history.downsampled && <p className="muted small">Each point: {history.bucket} ticks.</p>}
      {history.nodes.map((node) =>
        node.kind === 'fixedpoint' ? (
          <FixedPointFrontier key={node.node} node={node} ticks={history.ticks} />
        ) : (
          <WindowFrontier key={node.node} node={node} ticks={history.ticks} />
        ),
      )}
    </div>
  );
}
