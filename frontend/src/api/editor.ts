// REST calls of the circuit editor, the circuit list, sharing and sign-up
// (the base client, errors and CSRF handling live in ../api).

import { request, type ApiSchemas, type Circuit, type CircuitVersion, type Page } from '../api';
import type { Doc, Schemas } from '../editor/model';

export interface Operator {
  kind: string;
  title: string;
  category: string;
  inputs: string[];
  outputs: string[];
  linear: boolean;
  stream: boolean;
  doc: string;
  params?: JsonSchema;
}

export type JsonSchema = Record<string, unknown>;

/** `POST /api/validate/`. The schema types `schemas` (a dict field) as a bare object. */
export type Validation = Omit<ApiSchemas['ValidationResult'], 'schemas'> & { schemas: Schemas };

export type Scope = 'mine' | 'shared' | 'public';

export type ShareGrant = ApiSchemas['ShareGrant'];

/** A circuit's sharing settings (every field always there). */
export type ShareInfo = ApiSchemas['ShareSettings'];

interface DiffEdge {
  from: { node: string; port: string };
  to: { node: string; port: string };
}

/** Two versions compared. The schema types `nodes`, `edges` and `document` (dict fields) as bare objects. */
export type VersionDiff = Omit<ApiSchemas['VersionDiff'], 'nodes' | 'edges' | 'document'> & {
  nodes: { added: { id: string; kind?: string }[]; removed: { id: string; kind?: string }[]; changed: { id: string; fields: string[]; changes?: Record<string, { from?: unknown; to?: unknown }> }[] };
  edges: { added: DiffEdge[]; removed: DiffEdge[] };
  document: Record<string, { from?: unknown; to?: unknown }>;
};

/** One item of a version diff with who changed it (docs/collaboration.md, "Who changed what"). */
export type ChangeAuthors = ApiSchemas['ChangeAuthors'];

/** A circuit (tags, forked_from, can_edit and can_operate included). */
export type EditorCircuit = Circuit;

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const editorApi = {
  register: (username: string, password: string, email?: string) =>
    request<ApiSchemas['Registered']>('POST', '/api/auth/register/', { username, password, ...(email ? { email } : {}) }),

  operators: () => request<Operator[]>('GET', '/api/operators/'),
  circuitFormat: () => request<JsonSchema>('GET', '/api/circuit-format/'),
  validate: (document: Doc) => request<Validation>('POST', '/api/validate/', { document }),
  /** The compiled plan, as a circuit document (the server's Plan, runs as shown). */
  plan: (document: Doc) => request<ApiSchemas['Plan']>('POST', '/api/plan/', { document }),

  listCircuits: (opts: { search?: string; tag?: string; scope?: Scope; page?: number }) =>
    request<Page<EditorCircuit>>('GET', `/api/circuits/${query(opts)}`),
  createCircuit: (name: string, document: Doc, description = '') =>
    request<EditorCircuit>('POST', '/api/circuits/', { name, description, visibility: 'private', document }),
  renameCircuit: (id: number, name: string) => request<EditorCircuit>('PATCH', `/api/circuits/${id}/`, { name }),
  saveVersion: (id: number, document: Doc, message = '') =>
    request<CircuitVersion>('POST', `/api/circuits/${id}/versions/`, message ? { document, message } : { document }),
  versions: (id: number) => request<CircuitVersion[] | Page<CircuitVersion>>('GET', `/api/circuits/${id}/versions/`),
  version: (id: number, n: number) => request<CircuitVersion>('GET', `/api/circuits/${id}/versions/${n}/`),
  /** Forks a circuit; a share token lets a non-owner fork an unlisted circuit opened by link. */
  fork: (id: number, shareToken?: string) =>
    request<EditorCircuit>('POST', `/api/circuits/${id}/fork/${query({ share: shareToken })}`, {}),
  diff: (id: number, a: number, b: number) => request<VersionDiff>('GET', `/api/circuits/${id}/versions/${a}/diff/${b}/`),
  share: (id: number) => request<ShareInfo>('GET', `/api/circuits/${id}/share/`),
  updateShare: (id: number, patch: ApiSchemas['PatchedShareSettingsUpdateRequest']) =>
    request<ShareInfo>('PATCH', `/api/circuits/${id}/share/`, patch),
  revokeShare: (id: number) => request<ShareInfo>('POST', `/api/circuits/${id}/share/revoke/`),
  shared: (token: string) => request<EditorCircuit>('GET', `/api/shared/${encodeURIComponent(token)}/`),
};

/** The versions endpoint may answer a list or a page; either way, newest first. */
export function versionList(body: CircuitVersion[] | Page<CircuitVersion>): CircuitVersion[] {
  const list = Array.isArray(body) ? body : body.results;
  return [...list].sort((a, b) => b.number - a.number);
}
