// The run's operator profile and frontier over ticks (GET /api/runs/<id>/profile/ and
// /frontier/, runs/profile.py).

import { request } from '../api';

export const METRICS = ['ms', 'rows_in', 'rows_out', 'state_rows', 'spark_jobs'] as const;
export type Metric = (typeof METRICS)[number];

export const METRIC_LABELS: Record<Metric, string> = {
  ms: 'time (ms)',
  rows_in: 'rows in',
  rows_out: 'rows out',
  state_rows: 'state rows',
  spark_jobs: 'Spark jobs',
};

/** Where a node's tick ran. */
export type Path = 'skipped' | 'reference' | 'row' | 'arrow' | 'spark';

export interface ProfileNode {
  node: string;
  kind: string | null;
  /** One value per point of `ticks` (a bucket of `bucket` ticks when downsampled). */
  series: number[];
  paths: (Path | null)[];
  total: number;
  max: number;
  path_ticks: Partial<Record<Path, number>>;
  /** Windows only: late rows per point, and in all. */
  late_rows?: number[];
  late_rows_total?: number;
}

export interface Profile {
  metric: Metric;
  unit: string;
  aggregate: 'sum' | 'last';
  from: number | null;
  to: number | null;
  ticks: number[];
  bucket: number;
  downsampled: boolean;
  truncated: boolean;
  max_ticks: number;
  nodes: ProfileNode[];
  total: number;
  top: { node: string; kind: string | null; total: number; share: number }[];
}

export interface FrontierNode {
  node: string;
  kind: string;
  iterations?: number[];
  converged?: boolean[];
  waterline?: unknown[];
  windows_closed?: number[];
  late_rows?: number[];
}

export interface FrontierHistory {
  from: number | null;
  to: number | null;
  ticks: number[];
  bucket: number;
  downsampled: boolean;
  truncated: boolean;
  nodes: FrontierNode[];
}

function range(from?: number, to?: number): string {
  const q = new URLSearchParams();
  if (from !== undefined) q.set('from', String(from));
  if (to !== undefined) q.set('to', String(to));
  return q.toString();
}

export function fetchProfile(runId: number, metric: Metric, from?: number, to?: number): Promise<Profile> {
  const q = range(from, to);
  return request<Profile>('GET', `/api/runs/${runId}/profile/?metric=${metric}${q ? `&${q}` : ''}`);
}

export function fetchFrontier(runId: number, from?: number, to?: number): Promise<FrontierHistory> {
  const q = range(from, to);
  return request<FrontierHistory>('GET', `/api/runs/${runId}/frontier/${q ? `?${q}` : ''}`);
}
