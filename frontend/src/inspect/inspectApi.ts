// The node inspector's REST call (docs/api.md): GET /api/runs/<id>/nodes/<node>/ pages a
// node's delta or contents at a tick. The first request for a tick answers 202 while a
// worker recomputes every node of that tick; the panel polls until it is done.
import { request } from '../api';
import type { Column } from '../api';
import type { NodeStats } from '../api/runs';
import type { WeightedRow } from '../zset';

export type NodeKind = 'delta' | 'integral';
export type Sign = 'positive' | 'negative';
/** The weight's sort key (a name no column can have). */
export const SORT_WEIGHT = '@weight';

export interface NodeQuery {
  tick: number;
  kind: NodeKind;
  page: number;
  pageSize: number;
  sort?: string | null;
  desc?: boolean;
  /** `column:value` filters, all must hold. */
  filters?: string[];
  q?: string;
  sign?: Sign | null;
}

export interface NodeSizes {
  delta_rows: number;
  integral_rows: number;
  inserted: number;
  deleted: number;
  /** Inside fixed points: rows at each inner iteration of the tick. */
  iterations: { iteration: number | number[]; rows: number }[] | null;
}

export interface NodePage {
  status: 'queued' | 'running' | 'done' | 'failed';
  progress: number;
  run: number;
  tick: number;
  node: string;
  kind: NodeKind;
  error?: string;
  operator?: string | null;
  export?: string;
  columns?: Column[];
  rows?: WeightedRow[];
  count?: number;
  total?: number;
  page?: number;
  page_size?: number;
  pages?: number;
  sizes?: NodeSizes;
  stats?: NodeStats;
  method?: string | null;
}

export function nodeUrl(runId: number, node: string, query: NodeQuery): string {
  const params = new URLSearchParams({
    tick: String(query.tick),
    kind: query.kind,
    page: String(query.page),
    page_size: String(query.pageSize),
  });
  if (query.sort) {
    params.set('sort', query.sort);
    if (query.desc) params.set('desc', '1');
  }
  for (const f of query.filters ?? []) params.append('filter', f);
  if (query.q) params.set('q', query.q);
  if (query.sign) params.set('sign', query.sign);
  return `/api/runs/${runId}/nodes/${encodeURIComponent(node)}/?${params.toString()}`;
}

export const inspectApi = {
  nodePage: (runId: number, node: string, query: NodeQuery) => request<NodePage>('GET', nodeUrl(runId, node, query)),
};

export const computing = (page: NodePage) => page.status === 'queued' || page.status === 'running';
