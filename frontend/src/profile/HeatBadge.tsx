// On a node of the circuit graph in profile mode: the metric's value, where its latest
// tick ran, and (windows) its late rows; and the graph's legend for the heat scale.

import './profile.css';
import type { Path } from './api';
import { PATH_LABELS, type GraphHeat } from './heat';

export function HeatBadge({ nodeId, heat }: { nodeId: string; heat: GraphHeat }) {
  const value = heat.values[nodeId];
  if (value === undefined) return null;
  const path: Path | undefined = heat.paths[nodeId];
  const late = heat.late[nodeId];
  return (
    <div className="heat-badge" data-testid={`heat-${nodeId}`} data-value={value} data-path={path ?? ''}>
      <b>{value}</b>
      {path && path !== 'skipped' && (
        <span className={`path-tag path-${path}`} title={`latest tick: ${PATH_LABELS[path]}`}>
          {path}
        </span>
      )}
      {late ? (
        <span className="late-tag" data-testid={`heat-late-${nodeId}`} title="rows that arrived after their window closed">
          late {late}
        </span>
      ) : null}
    </div>
  );
}

export function HeatLegend({ heat }: { heat: GraphHeat }) {
  return (
    <>
      <span data-testid="heat-legend-title">Fill: {heat.legend.title}:</span>
      <span>{heat.legend.min}</span>
      <span className="scale" data-testid="heat-scale" style={{ background: heat.legend.gradient }} />
      <span>{heat.legend.max}</span>
    </>
  );
}
