// The operator profile of a run: which metric colours the circuit graph, the nodes that
// cost the most, and the selected node's metric over ticks (with where each tick ran,
// and late rows for windows).

import './profile.css';
import { useMemo } from 'react';
import { METRIC_LABELS, METRICS, type Path, type ProfileNode } from './api';
import { aggregateWords, formatValue, PATH_LABELS } from './heat';
import { SeriesChart, type Series } from './SeriesChart';
import type { ProfileState } from './useProfile';

export const SERIES_COLOUR = '#2f5fd0';
export const LATE_COLOUR = '#7b3fb3';

export function pathSummary(node: ProfileNode): string {
  const parts = (Object.entries(node.path_ticks) as [Path, number][])
    .filter(([, n]) => n > 0)
    .map(([p, n]) => `${PATH_LABELS[p] ?? p} ×${n}`);
  // (the nodes inside a fixed point report rows, state and time; their path and jobs
  // are counted on the fixed point itself)
  return parts.join(' · ') || 'not recorded (inside a fixed point: see the fixed point node)';
}

export function ProfilePanel({ state }: { state: ProfileState }) {
  const { profile, metric, colouring, setColouring, selected, select, error } = state;
  const node = useMemo(() => profile?.nodes.find((n) => n.node === selected) ?? null, [profile, selected]);
  const series: Series[] = useMemo(() => {
    if (!node) return [];
    const out: Series[] = [{ label: METRIC_LABELS[metric], values: node.series, colour: SERIES_COLOUR }];
    if (node.late_rows) out.push({ label: 'late rows', values: node.late_rows, colour: LATE_COLOUR, style: 'points' });
    return out;
  }, [node, metric]);

  return (
    <div className="profile-panel" data-testid="profile-panel">
      <fieldset className="profile-metrics" data-testid="profile-metric">
        <legend>Colour the circuit by</legend>
        <label className="checkbox small">
          <input type="radio" name="profile-metric" value="share" checked={colouring === 'share'} onChange={() => setColouring('share')} data-testid="profile-metric-share" />
          share of the latest tick&apos;s time (live)
        </label>
        {METRICS.map((m) => (
          <label key={m} className="checkbox small">
            <input type="radio" name="profile-metric" value={m} checked={colouring === m} onChange={() => setColouring(m)} data-testid={`profile-metric-${m}`} />
            {METRIC_LABELS[m]} over ticks
          </label>
        ))}
      </fieldset>
      {error && <p className="warning" data-testid="profile-error">{error}</p>}
      {!profile ? (
        <p className="muted small">No ticks profiled yet.</p>
      ) : (
        <div className="profile-body">
          <div className="profile-top">
            <h4>
              Top nodes by {METRIC_LABELS[metric]} <span className="muted small">({aggregateWords(profile)})</span>
            </h4>
            {profile.top.length === 0 ? (
              <p className="muted small">Every node is at 0.</p>
            ) : (
              <ol data-testid="profile-top">
                {profile.top.map((t) => (
                  <li key={t.node}>
                    <button
                      type="button"
                      className={`link${t.node === selected ? ' on' : ''}`}
                      data-testid={`profile-top-${t.node}`}
                      data-total={t.total}
                      onClick={() => select(t.node)}
                    >
                      <code>{t.node}</code>
                    </button>{' '}
                    <span className="muted small">{t.kind}</span> {formatValue(t.total, profile.unit)}{' '}
                    <span className="muted small">({Math.round(t.share * 100)}%)</span>
                  </li>
                ))}
              </ol>
            )}
            <p className="muted small" data-testid="profile-range">
              {profile.ticks.length} point{profile.ticks.length === 1 ? '' : 's'}
              {profile.downsampled ? `, each ${profile.bucket} ticks` : ''}
              {profile.truncated ? ` (the newest ${profile.max_ticks} ticks)` : ''}. Click a node here or in the graph to plot it.
            </p>
          </div>
          <div className="profile-series" data-testid="profile-series" data-node={node?.node ?? ''}>
            {node ? (
              <>
                <h4>
                  <code>{node.node}</code> — {METRIC_LABELS[metric]} per {profile.bucket > 1 ? `${profile.bucket} ticks` : 'tick'}
                  {node.late_rows_total ? (
                    <span className="late-tag" data-testid="profile-series-late">
                      {' '}
                      late rows: {node.late_rows_total}
                    </span>
                  ) : null}
                </h4>
                <SeriesChart ticks={profile.ticks} series={series} testId="profile-chart" />
                <p className="muted small" data-testid="profile-paths">
                  Where its ticks ran: {pathSummary(node)}
                </p>
              </>
            ) : (
              <p className="muted small">Select a node to plot its {METRIC_LABELS[metric]} over ticks.</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
