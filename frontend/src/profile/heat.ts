// The circuit graph as a heatmap of one profile metric: each node's colour on a neutral
// sequential scale (pale to a medium blue: a colour says how much, never that something
// failed), the legend's words, and the values as people read them. Pure functions.

import { shareColour, SHARE_GRADIENT } from '../dashboard/graphDecorations';
import { METRIC_LABELS, type Metric, type Path, type Profile } from './api';

export interface GraphHeat {
  /** node -> fill colour */
  colours: Record<string, string>;
  /** node -> "12.5 ms", the value the colour stands for */
  values: Record<string, string>;
  /** node -> where its latest profiled tick ran */
  paths: Record<string, Path>;
  /** window nodes -> late rows over the profiled ticks (only those with some) */
  late: Record<string, number>;
  legend: { title: string; min: string; max: string; gradient: string };
  selected: string | null;
}

export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return '—';
  const text = Number.isInteger(value)
    ? value.toLocaleString('en-US')
    : value >= 100
      ? value.toFixed(0)
      : value >= 10
        ? value.toFixed(1)
        : value.toFixed(2);
  return `${text} ${unit}`;
}

/** What the colour of a metric's node stands for: a sum over the ticks, or the latest value. */
export function aggregateWords(profile: Pick<Profile, 'aggregate' | 'from' | 'to'>): string {
  const span = profile.from === null ? 'no ticks' : profile.from === profile.to ? `tick ${profile.from}` : `ticks ${profile.from}–${profile.to}`;
  return profile.aggregate === 'sum' ? `total over ${span}` : `at tick ${profile.to ?? '—'}`;
}

/** The heat scale: 0 → idle, the largest node → the darkest shade (linear). Fixed points
 * (whose time and rows are their inner nodes') are scaled against the largest of them too. */
export function graphHeat(profile: Profile, selected: string | null = null): GraphHeat {
  const max = Math.max(0, ...profile.nodes.map((n) => n.total));
  const colours: Record<string, string> = {};
  const values: Record<string, string> = {};
  const paths: Record<string, Path> = {};
  const late: Record<string, number> = {};
  for (const n of profile.nodes) {
    colours[n.node] = shareColour(max > 0 ? n.total / max : 0);
    values[n.node] = formatValue(n.total, profile.unit);
    const last = [...n.paths].reverse().find((p) => p !== null && p !== 'skipped') ?? n.paths[n.paths.length - 1];
    if (last) paths[n.node] = last;
    if (n.late_rows_total) late[n.node] = n.late_rows_total;
  }
  return {
    colours,
    values,
    paths,
    late,
    legend: {
      title: `${METRIC_LABELS[profile.metric as Metric] ?? profile.metric}, ${aggregateWords(profile)}`,
      min: formatValue(0, profile.unit),
      max: formatValue(max, profile.unit),
      gradient: SHARE_GRADIENT,
    },
    selected,
  };
}

export const PATH_LABELS: Record<Path, string> = {
  skipped: 'skipped (no change)',
  reference: 'reference evaluator',
  row: 'driver, row by row',
  arrow: 'driver, Arrow',
  spark: 'Spark',
};
