// CSV upload preview: parse with papaparse (header row = column names, optional
// `_weight` column), check every cell against the input's schema in the browser, and
// later pin the server's per-row errors onto the same preview rows.

import Papa from 'papaparse';
import type { ChangeRecord, Column, Row } from '../api';
import { checkTemporal, convertValue } from '../rowValues';

export const WEIGHT_COLUMN = '_weight';

export interface CellError {
  /** The column the error is about, or null for the whole row. */
  field: string | null;
  message: string;
  source: 'client' | 'server';
}

export interface PreviewRow {
  /** 0-based index among the data rows (the header is not a row). */
  index: number;
  /** The line in the file (the header is line 1). */
  line: number;
  cells: Record<string, string>;
  weight: number;
  row: Row | null;
  errors: CellError[];
}

export interface CsvPreview {
  columns: string[];
  rows: PreviewRow[];
  /** Problems with the file as a whole (header, unknown columns). */
  fileErrors: string[];
}

const TRUE = new Set(['true', 't', '1', 'yes', 'y']);
const FALSE = new Set(['false', 'f', '0', 'no', 'n']);
/** One CSV cell -> a typed value for the column, or a message naming what is wrong.
 * A list cell holds JSON array text (`"[""a"",""b""]"` in CSV quoting), checked
 * element by element as in the push form. */
export function checkCell(column: Column & { nullable?: boolean }, text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const trimmed = column.type === 'string' ? text : text.trim();
  if (trimmed === '') {
    if (column.nullable === false) return { ok: false, message: 'must not be empty (the column is not nullable)' };
    return { ok: true, value: null };
  }
  if (column.type === 'date' || column.type === 'timestamp') {
    const checked = checkTemporal(column.type, trimmed);
    return checked.ok ? checked : { ok: false, message: `${checked.message}, got "${text}"` };
  }
  if (column.type === 'boolean') {
    const low = trimmed.toLowerCase();
    if (TRUE.has(low)) return { ok: true, value: true };
    if (FALSE.has(low)) return { ok: true, value: false };
    return { ok: false, message: `must be true or false, got "${text}"` };
  }
  const converted = convertValue(column.type, trimmed, { digitsOnly: true });
  if (!converted.ok) return { ok: false, message: `${converted.message}, got "${text}"` };
  return converted;
}

function checkWeight(text: string | undefined): { ok: true; weight: number } | { ok: false; message: string } {
  if (text === undefined || text.trim() === '') return { ok: true, weight: 1 };
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) return { ok: false, message: `must be a nonzero whole number, got "${text}"` };
  const weight = Number(trimmed);
  if (weight === 0 || !Number.isSafeInteger(weight)) return { ok: false, message: `must be a nonzero whole number, got "${text}"` };
  return { ok: true, weight };
}

/**
 * Rows are counted as the server counts them (0-based data rows after the header, a
 * blank line inside the file is a row of its own and an error), so the server's row
 * numbers land on the same preview rows.
 */
export function parseCsv(text: string, schema: readonly (Column & { nullable?: boolean })[]): CsvPreview {
  const parsed = Papa.parse<string[]>(text, { header: false, skipEmptyLines: false });
  const records = parsed.data;
  // A final newline leaves one empty record behind: not a row.
  while (records.length > 0 && isBlank(records[records.length - 1]!)) records.pop();
  const header = (records[0] ?? []).map((h) => h.trim());
  const known = new Set(schema.map((c) => c.name));
  const fileErrors: string[] = [];
  if (header.length === 0 || header.every((h) => h === '')) {
    return { columns: [], rows: [], fileErrors: ['The file is empty: its first line must name the columns.'] };
  }
  const unknown = header.filter((h) => !known.has(h) && h !== WEIGHT_COLUMN);
  if (unknown.length) {
    fileErrors.push(
      `Unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')} (columns: ${schema
        .map((c) => c.name)
        .join(', ')}, optional ${WEIGHT_COLUMN}).`,
    );
  }
  const missing = schema.filter((c) => c.nullable === false && !header.includes(c.name));
  if (missing.length) {
    fileErrors.push(`Missing column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `"${c.name}"`).join(', ')} (not nullable).`);
  }
  const duplicates = [...new Set(header.filter((h, i) => header.indexOf(h) !== i))];
  if (duplicates.length) fileErrors.push(`Repeated column ${duplicates.map((d) => `"${d}"`).join(', ')}.`);

  const quoteErrors = new Map<number, string[]>();
  for (const error of parsed.errors) {
    if (typeof error.row !== 'number' || error.row < 1) continue;
    quoteErrors.set(error.row - 1, [...(quoteErrors.get(error.row - 1) ?? []), error.message]);
  }

  const rows: PreviewRow[] = records.slice(1).map((fields, index) => {
    const errors: CellError[] = (quoteErrors.get(index) ?? []).map((message) => ({ field: null, message, source: 'client' as const }));
    const cells = Object.fromEntries(header.map((h, i) => [h, fields[i] ?? '']));
    const row: Row = {};
    let weight = 1;
    if (isBlank(fields)) {
      errors.push({ field: null, message: 'empty line (remove it)', source: 'client' });
    } else if (fields.length !== header.length) {
      errors.push({ field: null, message: `${fields.length} fields, the header has ${header.length}`, source: 'client' });
    } else {
      for (const column of schema) {
        if (!header.includes(column.name)) {
          row[column.name] = null; // a missing non-null column is a file error
          continue;
        }
        const checked = checkCell(column, cells[column.name] ?? '');
        if (checked.ok) row[column.name] = checked.value;
        else errors.push({ field: column.name, message: `${column.name} ${checked.message}`, source: 'client' });
      }
      const w = checkWeight(cells[WEIGHT_COLUMN]);
      if (w.ok) weight = w.weight;
      else errors.push({ field: WEIGHT_COLUMN, message: `${WEIGHT_COLUMN} ${w.message}`, source: 'client' });
    }
    return { index, line: index + 2, cells, weight, row: errors.length ? null : row, errors };
  });
  return { columns: header, rows, fileErrors };
}

function isBlank(fields: readonly string[]): boolean {
  return fields.length === 0 || (fields.length === 1 && fields[0]!.trim() === '');
}

export interface ServerRowError {
  row?: number | null;
  field?: string | null;
  message?: string;
}

/** The preview with the server's errors (by 0-based data row) attached to their rows;
 * errors without a row become file errors. Earlier server errors are replaced. */
export function withServerErrors(preview: CsvPreview, errors: readonly ServerRowError[], detail?: string): CsvPreview {
  const byRow = new Map<number, CellError[]>();
  const general: string[] = [];
  for (const e of errors) {
    const message = e.message ?? 'rejected';
    if (typeof e.row === 'number' && e.row >= 0 && e.row < preview.rows.length) {
      const list = byRow.get(e.row) ?? [];
      list.push({ field: e.field ?? null, message, source: 'server' });
      byRow.set(e.row, list);
    } else {
      general.push(e.row !== undefined && e.row !== null ? `row ${e.row}: ${message}` : message);
    }
  }
  const rows = preview.rows.map((r) => {
    const client = r.errors.filter((e) => e.source === 'client');
    const server = byRow.get(r.index) ?? [];
    return server.length || client.length !== r.errors.length ? { ...r, errors: [...client, ...server] } : r;
  });
  const fileErrors = [...preview.fileErrors.filter((f) => !f.startsWith('Server: ')), ...general.map((g) => `Server: ${g}`)];
  if (detail && !general.length && !byRow.size) fileErrors.push(`Server: ${detail}`);
  return { ...preview, rows, fileErrors };
}

export function errorCount(preview: CsvPreview): number {
  return preview.rows.filter((r) => r.errors.length > 0).length;
}

export function clientErrorCount(preview: CsvPreview): number {
  return preview.rows.filter((r) => r.errors.some((e) => e.source === 'client')).length;
}

/** Change records for a preview without errors (JSON push fallback). */
export function toRecords(preview: CsvPreview): ChangeRecord[] {
  return preview.rows.flatMap((r): ChangeRecord[] => {
    if (!r.row) return [];
    if (r.weight === 1) return [{ insert: r.row }];
    if (r.weight === -1) return [{ delete: r.row }];
    return [{ weight: r.weight, data: r.row }];
  });
}
