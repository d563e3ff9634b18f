// The node inspector's REST call (docs/api.md): GET /api/runs/<id>/nodes/<node>/ pages a
// node's delta or contents at a tick. The first request for a tick answers 202 while a
// worker recomputes every node of that tick; the panel polls until it is done.
import { request, type ApiSchemas } from '../api';
import type { NodeStats } from '../api/runs';

export type NodeKind = ApiSchemas['NodeKindEnum'];
export type Sign = ApiSchemas['RowSignEnum'];
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

// The answer's types are the server's (runs/api/serializers.py, generated into
// api/schema.d.ts by ./scripts/api-types).

export type NodeSizes = ApiSchemas['NodeSizes'];

/** A page of the node (status done); its `stats` are the run's own (the live protocol's
 * NodeStats), or empty when it has none. */
export type DonePage = Omit<ApiSchemas['NodePage'], 'stats'> & { stats: Partial<NodeStats> };
/** The tick's inspection still computed (queued, running: 202) or failed (once; the next
 * request tries again). */
export type PendingPage = ApiSchemas['NodeInspectionPending'];
/** What GET /api/runs/<id>/nodes/<node>/ answers (the schema's NodeAnswer). */
export type NodePage = DonePage | PendingPage;

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

export const computing = (page: NodePage): page is PendingPage & { status: 'queued' | 'running' } =>
  page.status === 'queued' || page.status === 'running';
