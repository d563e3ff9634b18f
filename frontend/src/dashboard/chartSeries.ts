// The live chart's data: for every output view its row count (Σ weight), and for every
// numeric column the view's column total (Σ value × weight over its rows) after each tick. For a one-row view such
// as `total` that is simply the value. Kept incrementally: a delta adds its own sums;
// history before a snapshot is rebuilt backwards by subtracting each tick's delta.

import type { TickRecord } from '../api/runs';
import type { WeightedRow, ZSet } from '../zset';

/** `${view}.${column}` -> column total. */
export type ColumnSums = Record<string, number>;

export interface ChartPoint {
  tick: number;
  values: ColumnSums;
}

/** Points kept per run page (older ones are dropped). */
export const CHART_LIMIT = 2000;

export const seriesKey = (view: string, column: string) => `${view}.${column}`;
/** The row-count series of a view (no column can be named `count(*)`). */
export const COUNT = 'count(*)';
export const countKey = (view: string) => seriesKey(view, COUNT);
const viewOf = (key: string) => key.slice(0, key.lastIndexOf('.'));
const columnOf = (key: string) => key.slice(key.lastIndexOf('.') + 1);

/** What the picker and legend call a series: "big_orders rows", "Σ big_orders.amount",
 * or a one-row view's value as it is ("total.total"). */
export function seriesLabel(key: string, views: Record<string, ZSet> = {}): string {
  if (columnOf(key) === COUNT) return `${viewOf(key)} rows`;
  return views[viewOf(key)]?.size === 1 ? key : `Σ ${key}`;
}

function addRows(target: ColumnSums, view: string, rows: Iterable<WeightedRow>, sign: number): void {
  for (const { data, weight } of rows) {
    target[countKey(view)] = (target[countKey(view)] ?? 0) + sign * weight;
    for (const [column, value] of Object.entries(data)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      const key = seriesKey(view, column);
      target[key] = (target[key] ?? 0) + sign * value * weight;
    }
  }
}

/** Column totals of integrated views. */
export function columnSums(views: Record<string, ZSet | readonly WeightedRow[]>): ColumnSums {
  const sums: ColumnSums = {};
  for (const [view, rows] of Object.entries(views)) addRows(sums, view, rows instanceof Map ? rows.values() : (rows as WeightedRow[]), 1);
  return sums;
}

/** `base` plus (sign 1) or minus (sign -1) the sums of a tick's output deltas. */
export function addDelta(base: ColumnSums, views: Record<string, readonly WeightedRow[]>, sign: 1 | -1 = 1): ColumnSums {
  const sums = { ...base };
  for (const [view, rows] of Object.entries(views)) addRows(sums, view, rows, sign);
  return sums;
}

/** Inserts or replaces the point for its tick, keeping points sorted and bounded. */
export function putPoint(points: readonly ChartPoint[], point: ChartPoint): ChartPoint[] {
  const rest = points.filter((p) => p.tick !== point.tick);
  rest.push(point);
  rest.sort((a, b) => a.tick - b.tick);
  return rest.slice(-CHART_LIMIT);
}

/**
 * Points for the ticks of `records` (stored deltas up to and including `anchor.tick`),
 * rebuilt backwards from the sums known at `anchor.tick`. Ticks that already have a
 * point keep it.
 */
export function backfill(points: readonly ChartPoint[], anchor: ChartPoint, records: readonly Pick<TickRecord, 'tick' | 'views'>[]): ChartPoint[] {
  const have = new Set(points.map((p) => p.tick));
  const added: ChartPoint[] = [];
  const ordered = records.filter((r) => r.tick <= anchor.tick).sort((a, b) => b.tick - a.tick);
  let current = anchor.values;
  for (const record of ordered) {
    if (!have.has(record.tick) && record.tick >= 0) added.push({ tick: record.tick, values: current });
    current = addDelta(current, record.views ?? {}, -1);
  }
  const before = (ordered[ordered.length - 1]?.tick ?? -1) - 1;
  if (before >= 0 && !have.has(before)) added.push({ tick: before, values: current });
  if (!added.length) return [...points];
  return [...points, ...added].sort((a, b) => a.tick - b.tick).slice(-CHART_LIMIT);
}

/** Every series key seen in the points, sorted. */
export function seriesKeys(points: readonly ChartPoint[], current: ColumnSums = {}): string[] {
  const keys = new Set(Object.keys(current));
  for (const p of points) for (const k of Object.keys(p.values)) keys.add(k);
  return [...keys].sort();
}

/** Default selection, never a sum that means nothing (of ids, of averages): the value of
 * each scalar view (one row of one column, like a global sum) and the row count of every
 * other view. */
export function defaultSeries(views: Record<string, ZSet>, keys: readonly string[]): string[] {
  const scalar = new Set(
    Object.entries(views)
      .filter(([, z]) => z.size === 1 && Object.keys([...z.values()][0]!.data).length === 1)
      .map(([v]) => v),
  );
  return keys.filter((k) => (scalar.has(viewOf(k)) ? columnOf(k) !== COUNT : columnOf(k) === COUNT));
}

/** uPlot's columnar data: [ticks, series1, series2, ...]; a missing value is null. */
export function chartData(points: readonly ChartPoint[], keys: readonly string[]): [number[], ...(number | null)[][]] {
  const ticks = points.map((p) => p.tick);
  const series = keys.map((k) => points.map((p) => p.values[k] ?? 0));
  return [ticks, ...series];
}
