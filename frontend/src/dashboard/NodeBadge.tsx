import { frontierText, msText, rowsText, type NodeDecoration } from './graphDecorations';

interface Props {
  nodeId: string;
  decoration: NodeDecoration | undefined;
}

/** Per-node progress: frontier, rows in/out and state, time and its share of the tick. */
export function NodeBadge({ nodeId, decoration }: Props) {
  const frontier = decoration?.frontier;
  const stats = decoration?.stats;
  const rows = rowsText(stats);
  const ms = msText(stats, decoration?.share ?? 0);
  return (
    <div
      className="run-node-badge"
      data-testid={`node-badge-${nodeId}`}
      data-frontier-tick={frontier?.tick ?? ''}
      data-iteration={frontier?.iteration ?? ''}
      data-converged={frontier?.converged === undefined ? '' : String(frontier.converged)}
      data-rows-in={stats?.rows_in ?? ''}
      data-rows-out={stats?.rows_out ?? ''}
      data-state-rows={stats?.state_rows ?? ''}
      data-share={decoration ? decoration.share.toFixed(3) : ''}
    >
      <span className="badge-frontier">{frontierText(frontier)}</span>
      {rows && <span className="badge-rows">{rows}</span>}
      {ms && <span className="badge-ms">{ms}</span>}
    </div>
  );
}
