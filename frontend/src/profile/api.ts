// The run's operator profile and frontier over ticks (GET /api/runs/<id>/profile/ and
// /frontier/, runs/profile.py).

import { request, type ApiSchemas } from '../api';

export const METRICS = ['ms', 'rows_in', 'rows_out', 'state_rows', 'spark_jobs'] as const satisfies readonly Metric[];
/** The server's metrics (runs/profile.py): the generated schema's enum, so a metric
 * added or renamed on the server fails the type check here. */
export type Metric = ApiSchemas['MetricEnum'];

export const METRIC_LABELS: Record<Metric, string> = {
  ms: 'time (ms)',
  rows_in: 'rows in',
  rows_out: 'rows out',
  state_rows: 'state rows',
  spark_jobs: 'Spark jobs',
};

/** Where a node's tick ran. */
export type Path = ApiSchemas['PathsEnum'];

// The answers' types are the server's, generated from its OpenAPI schema (./api/schema.d.ts).
export type ProfileNode = ApiSchemas['ProfileNode'];
export type Profile = ApiSchemas['RunProfile'];
export type FrontierNode = ApiSchemas['FrontierNode'];
export type FrontierHistory = ApiSchemas['RunFrontier'];

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
