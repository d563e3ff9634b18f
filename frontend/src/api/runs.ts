// REST calls of the run dashboard beyond the basics in ../api.ts: pause/resume, outputs
// at a past tick, stored deltas, per-tick stats, and pushes that carry an Idempotency-Key,
// report upload progress (CSV) and surface backpressure (429 + Retry-After).

import {
  ApiError,
  errorMessages,
  readCookie,
  request,
  type ApiSchemas,
  type ChangeRecord,
  type CircuitVersion,
  type Lag,
  type PushResult,
  type Run,
} from '../api';
import type { components } from './live';

type LiveSchemas = components['schemas'];

export type { Lag };

/** Per node: the last complete outer tick; inside fixed points the inner iteration and
 * whether it converged; for event-time windows the waterline. Per node stats of a tick.
 * One definition with the live protocol's (runs/live_protocol.schema.json, generated
 * into ./live.d.ts). */
export type FrontierEntry = LiveSchemas['FrontierEntry'];
export type NodeStats = LiveSchemas['NodeStats'];
export type Frontier = LiveSchemas['Frontier'];
export type Stats = LiveSchemas['Stats'];

export function normaliseLag(value: unknown): Lag | null {
  if (typeof value === 'number' && Number.isFinite(value)) return { pushes: value };
  if (value && typeof value === 'object' && typeof (value as Lag).pushes === 'number') {
    const lag = value as Lag;
    return {
      pushes: lag.pushes,
      ...(typeof lag.rows === 'number' ? { rows: lag.rows } : {}),
      ...(typeof lag.ticks === 'number' ? { ticks: lag.ticks } : {}),
    };
  }
  return null;
}

/** A run as the REST API reports it (`lag` and `last_sequence` included). */
export type RunDetail = Run;

/** One tick of `GET /api/runs/{id}/deltas/`. The schema types `frontier` and `stats`
 * (dict fields) as bare objects: their shapes are spelled out here. */
export type TickRecord = Omit<ApiSchemas['TickDeltas'], 'frontier' | 'stats'> & {
  frontier: Frontier;
  stats: Stats;
};

export type DeltasPage = Omit<ApiSchemas['Deltas'], 'ticks'> & { ticks: TickRecord[] };

export type OutputsAtTick = ApiSchemas['Outputs'];

/** A 429 from a push: the server is behind; try the same push again after `retryAfterMs`. */
export class BackpressureError extends ApiError {
  readonly retryAfterMs: number;

  constructor(body: unknown, retryAfterMs: number) {
    const messages = errorMessages(body);
    super(429, body, messages.length ? messages : ['The run is busy (429); retrying shortly.']);
    this.name = 'BackpressureError';
    this.retryAfterMs = retryAfterMs;
  }
}

const DEFAULT_RETRY_MS = 1000;

/** Retry-After is delta-seconds or an HTTP date; missing or unreadable gives one second. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number {
  if (!value) return DEFAULT_RETRY_MS;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (!Number.isNaN(date)) return Math.max(0, date - now);
  return DEFAULT_RETRY_MS;
}

/** A fresh Idempotency-Key (a UUID where the browser offers one). */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function pushPath(runId: number, input: string): string {
  return `/api/runs/${runId}/inputs/${encodeURIComponent(input)}/push/`;
}

function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function failure(status: number, statusText: string, body: unknown, retryAfter: string | null): ApiError {
  if (status === 429) return new BackpressureError(body, parseRetryAfter(retryAfter));
  const messages = errorMessages(typeof body === 'string' ? '' : body);
  if (messages.length === 0) messages.push(`HTTP ${status}${statusText ? ` ${statusText}` : ''}`);
  return new ApiError(status, body, messages);
}

export interface PushOptions {
  idempotencyKey?: string;
}

/** JSON change records to one input; throws BackpressureError on 429. */
export async function pushRecords(
  runId: number,
  input: string,
  records: ChangeRecord[],
  options: PushOptions = {},
): Promise<PushResult> {
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
  const token = readCookie('csrftoken');
  if (token) headers['X-CSRFToken'] = token;
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(pushPath(runId, input), {
      method: 'POST',
      headers,
      credentials: 'same-origin',
      body: JSON.stringify(records),
    });
  } catch (err) {
    throw new ApiError(0, null, [`Network error: ${err instanceof Error ? err.message : String(err)}`]);
  }
  const body = parseBody(await response.text());
  if (!response.ok) throw failure(response.status, response.statusText, body, response.headers.get('Retry-After'));
  return body as PushResult;
}

export interface UploadOptions extends PushOptions {
  contentType: string;
  /** Fraction of the request body sent so far, 0..1. */
  onProgress?: (fraction: number) => void;
}

/** Sends a request body with upload progress (XMLHttpRequest: fetch has no upload progress). */
export function uploadPush(runId: number, input: string, body: string, options: UploadOptions): Promise<PushResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', pushPath(runId, input));
    xhr.withCredentials = true;
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', options.contentType);
    const token = readCookie('csrftoken');
    if (token) xhr.setRequestHeader('X-CSRFToken', token);
    if (options.idempotencyKey) xhr.setRequestHeader('Idempotency-Key', options.idempotencyKey);
    if (options.onProgress) {
      const report = options.onProgress;
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable && event.total > 0) report(event.loaded / event.total);
      };
      xhr.upload.onload = () => report(1);
    }
    xhr.onload = () => {
      const parsed = parseBody(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed as PushResult);
      else reject(failure(xhr.status, xhr.statusText, parsed, xhr.getResponseHeader('Retry-After')));
    };
    xhr.onerror = () => reject(new ApiError(0, null, ['Network error: the upload did not reach the server.']));
    xhr.onabort = () => reject(new ApiError(0, null, ['The upload was cancelled.']));
    xhr.send(body);
  });
}

export const runsApi = {
  getRun: (id: number) => request<RunDetail>('GET', `/api/runs/${id}/`),
  pause: (id: number) => request<RunDetail>('POST', `/api/runs/${id}/pause/`),
  resume: (id: number) => request<RunDetail>('POST', `/api/runs/${id}/resume/`),
  outputs: (id: number, tick?: number) =>
    request<OutputsAtTick>('GET', `/api/runs/${id}/outputs/${tick === undefined ? '' : `?tick=${tick}`}`),
  deltas: (id: number, since: number, limit = 100) =>
    request<DeltasPage>('GET', `/api/runs/${id}/deltas/?since=${since}&limit=${limit}`),
  versions: (circuitId: number) => request<CircuitVersion[]>('GET', `/api/circuits/${circuitId}/versions/`),
};
