// Verify a run and read its input tables (docs/api.md): POST /api/runs/<id>/verify/
// queues a verification that a worker of its own carries out; GET polls it.
import { request, type Page } from '../api';
import type { WeightedRow } from '../zset';

export interface ViewDifference {
  missing: WeightedRow[];
  extra: WeightedRow[];
  missing_count?: number;
  extra_count?: number;
}

export interface Verification {
  id: number;
  run: number;
  tick: number;
  status: 'queued' | 'running' | 'done' | 'failed';
  progress: number;
  method: 'reference' | 'spark' | null;
  error: string | null;
  ok?: boolean;
  views?: Record<string, ViewDifference>;
  url?: string;
}

export interface InputRows extends Page<WeightedRow> {
  input: string;
  through_sequence: number;
}

export const verifyApi = {
  verify: (runId: number, tick?: number) =>
    request<Verification>('POST', `/api/runs/${runId}/verify/${tick === undefined ? '' : `?tick=${tick}`}`),
  verification: (runId: number, id: number) => request<Verification>('GET', `/api/runs/${runId}/verify/${id}/`),
  inputRows: (runId: number, input: string, page: number, pageSize: number) =>
    request<InputRows>('GET', `/api/runs/${runId}/inputs/${encodeURIComponent(input)}/rows/?page=${page}&page_size=${pageSize}`),
};

export const finished = (v: Verification) => v.status === 'done' || v.status === 'failed';
