// Verify a run and read its input tables (docs/api.md): POST /api/runs/<id>/verify/
// queues a verification that a worker of its own carries out; GET polls it.
import { request, type ApiSchemas } from '../api';

// The answers' types are the server's (runs/api/serializers.py, generated into
// api/schema.d.ts by ./scripts/api-types).

/** A view's differing rows: the first ones of each side, and how many in all. */
export type ViewDifference = ApiSchemas['ViewDifference'];
/** A verification as GET polls it; POST answers the same with the `url` to poll. */
export type Verification = ApiSchemas['Verification'] & { url?: string };
/** A page of an input table's current contents. */
export type InputRows = ApiSchemas['InputRows'];

export const verifyApi = {
  verify: (runId: number, tick?: number) =>
    request<ApiSchemas['QueuedVerification']>('POST', `/api/runs/${runId}/verify/${tick === undefined ? '' : `?tick=${tick}`}`),
  verification: (runId: number, id: number) => request<Verification>('GET', `/api/runs/${runId}/verify/${id}/`),
  inputRows: (runId: number, input: string, page: number, pageSize: number) =>
    request<InputRows>('GET', `/api/runs/${runId}/inputs/${encodeURIComponent(input)}/rows/?page=${page}&page_size=${pageSize}`),
};

export const finished = (v: Verification) => v.status === 'done' || v.status === 'failed';
