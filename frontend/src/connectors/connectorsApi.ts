// The connectors' REST calls: a run's connectors with their status (docs/connectors.md),
// restarting a failed one, and the kinds the server knows (with their options) for the
// editor's Connectors section.

import { request, type ApiSchemas } from '../api';

export type RunConnector = ApiSchemas['Connector'];
export type DeadLetter = ApiSchemas['DeadLetter'];
export type DeadLetterPage = ApiSchemas['PaginatedDeadLetterList'];

/** A kind and its options, as GET /api/connector-kinds/ lists them (the form is built from them). */
export type ConnectorKind = ApiSchemas['ConnectorKind'];
export type KindOption = ApiSchemas['KindOption'];
export type TestResult = ApiSchemas['ConnectionTestResult'];

export const connectorsApi = {
  list: (runId: number) => request<RunConnector[]>('GET', `/api/runs/${runId}/connectors/`),
  restart: (runId: number, name: string) =>
    request<RunConnector>('POST', `/api/runs/${runId}/connectors/${encodeURIComponent(name)}/restart/`),
  pause: (runId: number, name: string) =>
    request<RunConnector>('POST', `/api/runs/${runId}/connectors/${encodeURIComponent(name)}/pause/`),
  start: (runId: number, name: string) =>
    request<RunConnector>('POST', `/api/runs/${runId}/connectors/${encodeURIComponent(name)}/start/`),
  deadLetters: (runId: number, name: string, pageSize: number) =>
    request<DeadLetterPage>('GET', `/api/runs/${runId}/connectors/${encodeURIComponent(name)}/dead-letters/?page_size=${pageSize}`),
  kinds: () => request<ConnectorKind[]>('GET', '/api/connector-kinds/'),
  test: (kind: string, config: Record<string, unknown>, secretsEnv: Record<string, string>) =>
    request<TestResult>('POST', `/api/connector-kinds/${encodeURIComponent(kind)}/test/`, { config, secrets_env: secretsEnv }),
};

/** How far behind a connector is: `12 records`, `1 file`, `3 ticks`; '–' when it cannot say. */
export function lagText(lag: number | null | undefined, unit: string): string {
  if (lag === null || lag === undefined) return '–';
  const singular = unit.endsWith('s') ? unit.slice(0, -1) : unit;
  return `${lag.toLocaleString('en-US')} ${lag === 1 ? singular : unit}`;
}

/** Rows a second, rounded to what is readable: `0`, `3.5`, `1,240`. */
export function rateText(rate: number): string {
  if (rate === 0) return '0';
  return rate < 10 ? rate.toFixed(1) : Math.round(rate).toLocaleString('en-US');
}

/** A source's position in a few words: Kafka offsets, the last file applied. */
export function positionText(position: unknown): string {
  if (!position || typeof position !== 'object') return '';
  const p = position as Record<string, unknown>;
  const parts: string[] = [];
  if (p.offsets && typeof p.offsets === 'object') {
    parts.push(
      Object.entries(p.offsets as Record<string, unknown>)
        .map(([partition, offset]) => `p${partition}@${String(offset)}`)
        .join(' '),
    );
  }
  if (typeof p.after === 'string') parts.push(`after ${p.after}`);
  if (typeof p.file === 'string') parts.push(`in ${p.file} at record ${String(p.record ?? 0)}`);
  const known = new Set(['offsets', 'after', 'file', 'record']);
  const rest = Object.fromEntries(Object.entries(p).filter(([k]) => !known.has(k)));
  if (Object.keys(rest).length) parts.push(JSON.stringify(rest));
  return parts.join('; ');
}
