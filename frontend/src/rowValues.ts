// Converting push-form field values into typed row values for the input schema.

import { elementTypeOf, type Column, type ColumnType, type ElementType, type Row } from './api';

/** Raw form state: text for most columns (JSON array text for lists), a checked flag for booleans. */
export type FieldValue = string | boolean;

export type Converted = { ok: true; value: unknown } | { ok: false; message: string };

const INTEGER = /^[+-]?\d+$/;
/** A decimal number as JSON writes it (no hex, no Infinity). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?$/;
/** The one way dates and timestamps are written, in placeholders and messages alike. */
export const DATE_FORMAT = 'YYYY-MM-DD';
export const TIMESTAMP_FORMAT = 'YYYY-MM-DDTHH:MM:SS';

function realDate(text: string): boolean {
  const date = new Date(`${text.slice(0, 10)}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text.slice(0, 10);
}

/** A date or timestamp as the server reads it (ISO 8601), or what is wrong. */
export function checkTemporal(type: 'date' | 'timestamp', text: string): Converted {
  const ok = (type === 'date' ? DATE : TIMESTAMP).test(text) && realDate(text);
  return ok ? { ok: true, value: text } : { ok: false, message: `must be a ${type} ${type === 'date' ? DATE_FORMAT : TIMESTAMP_FORMAT}` };
}

export interface ConvertOptions {
  /** CSV text: a bigint is digits only (the server reads it with int()); JSON numbers
   * such as 1e3 or 1000.0 are whole numbers too (the server accepts an integral float). */
  digitsOnly?: boolean;
}

/** Example JSON array text per element type (push form placeholders, error messages). */
export const LIST_EXAMPLES: Record<ElementType, string> = {
  bigint: '[1, 2]',
  double: '[1.5, 2]',
  string: '["a", "b"]',
  boolean: '[true, false]',
};

/** Null if a list element fits the element type (null always does), else what is wrong. */
function elementProblem(element: ElementType, value: unknown): string | null {
  if (value === null) return null;
  switch (element) {
    case 'bigint':
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be a whole number';
      return Number.isSafeInteger(value) ? null : 'is too large to send exactly (limit ±9007199254740991)';
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'string':
      return typeof value === 'string' ? null : 'must be a string';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
  }
}

/** A list column's value from JSON array text: empty is null; elements are checked by
 * index (0-based, as in the JSON), e.g. "element 2 must be a string". */
function convertList(element: ElementType, text: string): Converted {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed)) return { ok: false, message: `must be a JSON array, e.g. ${LIST_EXAMPLES[element]}` };
  for (const [index, value] of parsed.entries()) {
    const problem = elementProblem(element, value);
    if (problem) return { ok: false, message: `element ${index} ${problem}` };
  }
  return { ok: true, value: parsed };
}

export function convertValue(type: ColumnType, raw: FieldValue, options: ConvertOptions = {}): Converted {
  const element = elementTypeOf(type);
  if (element) return convertList(element, typeof raw === 'boolean' ? String(raw) : raw);
  if (type === 'boolean') {
    if (typeof raw === 'boolean') return { ok: true, value: raw };
    const text = raw.trim().toLowerCase();
    if (text === '') return { ok: true, value: null };
    if (text === 'true') return { ok: true, value: true };
    if (text === 'false') return { ok: true, value: false };
    return { ok: false, message: 'must be true or false' };
  }

  const text = typeof raw === 'boolean' ? String(raw) : raw;
  switch (type) {
    case 'bigint': {
      const trimmed = text.trim();
      if (trimmed === '') return { ok: true, value: null };
      const value = Number(trimmed);
      if (options.digitsOnly ? !INTEGER.test(trimmed) : !DECIMAL.test(trimmed) || !Number.isInteger(value)) return { ok: false, message: 'must be a whole number' };
      if (!Number.isSafeInteger(value)) {
        return { ok: false, message: 'is too large to send exactly (limit ±9007199254740991)' };
      }
      return { ok: true, value };
    }
    case 'double': {
      const trimmed = text.trim();
      if (trimmed === '') return { ok: true, value: null };
      const value = Number(trimmed);
      if (!Number.isFinite(value)) return { ok: false, message: 'must be a number' };
      return { ok: true, value };
    }
    case 'date':
    case 'timestamp':
      return text.trim() === '' ? { ok: true, value: null } : checkTemporal(type, text.trim());
    default:
      return { ok: true, value: text === '' ? null : text };
  }
}

export type RowResult = { ok: true; row: Row } | { ok: false; errors: string[] };

/** Builds a row from form values; collects one message per invalid column. */
export function buildRow(schema: readonly Column[], values: Readonly<Record<string, FieldValue>>): RowResult {
  const row: Row = {};
  const errors: string[] = [];
  for (const column of schema) {
    const raw = values[column.name] ?? (column.type === 'boolean' ? false : '');
    const converted = convertValue(column.type, raw);
    if (!converted.ok) errors.push(`${column.name} ${converted.message}`);
    else if (converted.value === null && (column as Column & { nullable?: boolean }).nullable === false)
      errors.push(`${column.name} must not be empty (the column is not nullable)`);
    else row[column.name] = converted.value;
  }
  return errors.length ? { ok: false, errors } : { ok: true, row };
}

/** Initial form values: unchecked checkboxes, empty text. */
export function emptyValues(schema: readonly Column[]): Record<string, FieldValue> {
  return Object.fromEntries(schema.map((c) => [c.name, c.type === 'boolean' ? false : '']));
}
