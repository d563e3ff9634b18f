// REST client for the dbspweb Django API. Same-origin, cookie session, CSRF header.
//
// The response types are the server's own: aliases of the types openapi-typescript
// generates from its OpenAPI schema (api/schema.d.ts, from api/openapi.json; regenerate
// both with ./scripts/api-types). Only what that schema leaves untyped (JSON fields,
// method fields returning a bare dict or list) is spelled out here.

import type { components } from './api/schema';

/** The schemas of the server's OpenAPI document (/api/schema/), by component name. */
export type ApiSchemas = components['schemas'];

/** The element types a list column can hold. */
export type ElementType = 'bigint' | 'double' | 'string' | 'boolean';
/** A list column: a JSON array of elements (each null or of the element type), or null. */
export type ArrayType = `array<${ElementType}>`;
export type ColumnType = ElementType | 'date' | 'timestamp' | ArrayType;

export const ARRAY_TYPES: readonly ArrayType[] = ['array<bigint>', 'array<double>', 'array<string>', 'array<boolean>'];

/** The element type of a list column, or null for a scalar column. */
export function elementTypeOf(type: ColumnType): ElementType | null {
  const match = /^array<(bigint|double|string|boolean)>$/.exec(type);
  return match ? (match[1] as ElementType) : null;
}

export interface Column {
  name: string;
  type: ColumnType;
}

export interface RunInput {
  name: string;
  schema: Column[];
}

export type RunStatus = ApiSchemas['Run']['status'];

/** Accepted pushes not yet applied (and their rows, and the ticks they need). The REST
 * API always sends all three; the live stream may send fewer, older servers a bare
 * number of pushes (see normaliseLag in api/runs). */
export interface Lag {
  pushes: number;
  rows?: number;
  ticks?: number;
}

/** A run as the REST API reports it. The schema types `inputs` (a method field) as a list
 * of bare objects and `lag` as a bare object: their shapes are spelled out here. */
export type Run = Omit<ApiSchemas['Run'], 'inputs' | 'lag'> & {
  readonly inputs: RunInput[];
  readonly lag: Lag;
};

/** A run as `GET /api/runs/` lists it (the requester's runs across circuits); its
 * `error` is the first line, shortened, and `can_operate` whether the requester may stop it. */
export type RunListItem = ApiSchemas['RunListItem'];

export interface PortRef {
  node: string;
  port: string;
}

export interface CircuitNode {
  id: string;
  kind: string;
  params?: Record<string, unknown>;
  position?: { x: number; y: number };
}

export interface CircuitEdge {
  from: PortRef;
  to: PortRef;
}

export interface CircuitDocument {
  format: string;
  version: number;
  nodes: CircuitNode[];
  edges: CircuitEdge[];
}

/** A saved version. The schema types `document` (a JSON field) as unknown: it is a
 * circuit document. */
export type CircuitVersion = Omit<ApiSchemas['Version'], 'document'> & { document: CircuitDocument };

export type Visibility = ApiSchemas['VisibilityEnum'];

/** A circuit. `latest_version` is null while the circuit has no version yet; its
 * `document` is a circuit document (the schema's is unknown). */
export type Circuit = Omit<ApiSchemas['Circuit'], 'latest_version'> & {
  readonly latest_version: CircuitVersion | null;
};

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export type Me = ApiSchemas['Me'];

export type Row = Record<string, unknown>;

export type ChangeRecord = { insert: Row } | { delete: Row } | { weight: number; data: Row };

export type PushResult = ApiSchemas['PushResult'];

/** An error response (or network failure) with its body turned into readable lines. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  readonly messages: string[];

  constructor(status: number, body: unknown, messages: string[]) {
    super(messages.join('\n'));
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.messages = messages;
  }
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(' ');
  return JSON.stringify(value);
}

/**
 * Turns any of the backend's error shapes into readable lines:
 * {"detail": "..."}, {"errors": [{"row"|"field"|"node": ..., "message": "..."}]}
 * and DRF field errors {"field": ["..."]}.
 */
export function errorMessages(body: unknown): string[] {
  if (typeof body === 'string') return body.trim() ? [body.trim()] : [];
  if (Array.isArray(body)) return body.flatMap(errorMessages);
  if (body === null || typeof body !== 'object') return [];

  const obj = body as Record<string, unknown>;
  const lines: string[] = [];
  if (typeof obj.detail === 'string') lines.push(obj.detail);
  if (Array.isArray(obj.errors)) {
    for (const item of obj.errors) {
      if (item && typeof item === 'object') {
        const e = item as Record<string, unknown>;
        const message = describeValue(e.message ?? item);
        // said once: an item the summary already quotes adds nothing
        if (typeof obj.detail === 'string' && message.length > 0 && obj.detail.includes(message)) continue;
        const where: string[] = [];
        // (a message that names its own record or row, "record 0: …", is not prefixed again)
        if (e.row !== undefined && e.row !== null && !/^(record|row) \d+\b/.test(message)) where.push(`row ${String(e.row)}`);
        if (e.node !== undefined && e.node !== null) where.push(`node ${String(e.node)}`);
        if (e.field !== undefined && e.field !== null) where.push(String(e.field));
        lines.push(where.length ? `${where.join(', ')}: ${message}` : message);
      } else {
        lines.push(describeValue(item));
      }
    }
  }
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'detail' || key === 'errors') continue;
    const message = describeValue(value);
    lines.push(key === 'non_field_errors' ? message : `${key}: ${message}`);
  }
  return lines;
}

/** Reads a cookie from document.cookie; called on every request (Django rotates csrftoken at login). */
export function readCookie(name: string, cookies: string = document.cookie): string | null {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type AuthProblemListener = () => void;
let authProblemListener: AuthProblemListener | null = null;

/** Called on 401/403 so the app can re-check whether the session is still alive. */
export function onAuthProblem(listener: AuthProblemListener | null): void {
  authProblemListener = listener;
}

/** Keeps paginated `next` links same-origin even if the server builds absolute URLs. */
function toLocalPath(url: string): string {
  const parsed = new URL(url, window.location.href);
  return parsed.pathname + parsed.search;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (!SAFE_METHODS.has(method)) {
    const token = readCookie('csrftoken');
    if (token) headers['X-CSRFToken'] = token;
  }

  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, null, [`Network error: ${err instanceof Error ? err.message : String(err)}`]);
  }

  const text = await response.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }

  if (!response.ok) {
    if ((response.status === 401 || response.status === 403) && authProblemListener) {
      authProblemListener();
    }
    const messages = errorMessages(data);
    if (messages.length === 0) {
      messages.push(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    }
    throw new ApiError(response.status, data, messages);
  }
  return data as T;
}

/** Fetches a paginated list, following `next` links (bounded). */
async function listAll<T>(path: string, maxPages = 20): Promise<T[]> {
  const items: T[] = [];
  let next: string | null = path;
  for (let page = 0; next && page < maxPages; page++) {
    const result: Page<T> = await request<Page<T>>('GET', next);
    items.push(...result.results);
    next = result.next ? toLocalPath(result.next) : null;
  }
  return items;
}

export const api = {
  me: () => request<Me>('GET', '/api/auth/me/'),
  login: (username: string, password: string) =>
    request<ApiSchemas['LoggedIn']>('POST', '/api/auth/login/', { username, password }),
  logout: () => request<void>('POST', '/api/auth/logout/'),

  listCircuits: () => listAll<Circuit>('/api/circuits/'),
  getCircuit: (id: number) => request<Circuit>('GET', `/api/circuits/${id}/`),
  deleteCircuit: (id: number) => request<void>('DELETE', `/api/circuits/${id}/`),
  listRuns: (circuitId: number) => listAll<Run>(`/api/circuits/${circuitId}/runs/`),
  startRun: (circuitId: number) => request<Run>('POST', `/api/circuits/${circuitId}/runs/`),

  /** One page of the requester's runs across circuits, newest first. */
  myRuns: ({ status = '', page = 1, pageSize = 50 }: { status?: string; page?: number; pageSize?: number } = {}) =>
    request<Page<RunListItem>>(
      'GET',
      `/api/runs/?${new URLSearchParams({ ...(status ? { status } : {}), page: String(page), page_size: String(pageSize) })}`,
    ),
  getRun: (id: number) => request<Run>('GET', `/api/runs/${id}/`),
  stopRun: (id: number) => request<Run>('POST', `/api/runs/${id}/stop/`),
  push: (runId: number, input: string, records: ChangeRecord[]) =>
    request<PushResult>(
      'POST',
      `/api/runs/${runId}/inputs/${encodeURIComponent(input)}/push/`,
      records,
    ),
};
