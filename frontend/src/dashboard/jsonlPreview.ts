// A push file as `python -m dbsp run` reads it: JSON Lines, one push per line, each line
// an object {input: [change records]} (Feldera's {"insert": row}, {"delete": row},
// {"weight": w, "data": row}). Checked in the browser against the run's input schemas
// before anything is sent, naming the line, input, record and column.

import type { ChangeRecord, Column, RunInput } from '../api';
import { checkTemporal, convertValue } from '../rowValues';

export interface JsonlPush {
  /** 1-based line in the file. */
  line: number;
  input: string;
  records: ChangeRecord[];
  /** The records as the file writes them (what is sent: the server checks the file's own digits). */
  body: string;
  errors: string[];
}

export interface JsonlPreview {
  pushes: JsonlPush[];
  /** Lines that are not a push at all (bad JSON, not an object, unknown input). */
  lineErrors: { line: number; message: string }[];
}

type Schema = readonly (Column & { nullable?: boolean })[];

/** A value as the server's messages show it (Python's repr): 'text', 1.5, nan, inf. */
function shown(value: unknown): string {
  if (typeof value === 'string') return NON_FINITE.has(value) ? NON_FINITE.get(value)! : `'${value}'`;
  if (value === true) return 'True';
  if (value === false) return 'False';
  return JSON.stringify(value);
}

// NaN, Infinity and -Infinity are not JSON; the server reads them as the numbers they name
// and refuses them naming the row and column, so the preview reads them as these markers
// (a NUL character: no value that would be stored holds one) and does the same.
const NON_FINITE = new Map([
  ['\u0000NaN', 'nan'],
  ['\u0000Infinity', 'inf'],
  ['\u0000-Infinity', '-inf'],
]);
const BIGINT_LIMIT = 2 ** 63;

/** The reason a value is refused, in the server's words (dbsp/types.py coerce_value), or null. */
function valueProblem(column: Column & { nullable?: boolean }, value: unknown): string | null {
  if (value === null) return column.nullable === false ? 'null in a non-null column' : null;
  const nonFinite = typeof value === 'string' && NON_FINITE.has(value);
  switch (column.type) {
    case 'bigint':
      if (typeof value !== 'number' || !Number.isInteger(value)) return `expected an integer (bigint), got ${shown(value)}`;
      // past 2^53 the browser's number is not the file's digits: the push is sent as the file has it and
      // the server checks those exactly; here only what is out of range even as read
      return value >= BIGINT_LIMIT || value < -BIGINT_LIMIT ? `${value} is out of the bigint range` : null;
    case 'double':
      if (nonFinite) return `${shown(value)} is not a finite number`;
      return typeof value === 'number' ? null : `expected a number (double), got ${shown(value)}`;
    case 'string':
      if (typeof value !== 'string' || nonFinite) return `expected a string, got ${shown(value)}`;
      return value.includes('\u0000') ? 'contains a NUL character (\\u0000), which cannot be stored' : null;
    case 'boolean':
      return typeof value === 'boolean' ? null : `expected true or false, got ${shown(value)}`;
    case 'date':
    case 'timestamp': {
      if (typeof value !== 'string' || nonFinite) return `expected a ${column.type}, got ${shown(value)}`;
      const checked = checkTemporal(column.type, value);
      return checked.ok ? null : `${checked.message}, got ${shown(value)}`;
    }
    default: {
      // a list column: each element by the element type's rule, then the push form's own check
      if (!Array.isArray(value)) return `expected a list (${column.type}, a JSON array), got ${shown(value)}`;
      const element = column.type.slice(6, -1) as Column['type'];
      for (const [i, item] of value.entries()) {
        const problem = valueProblem({ name: column.name, type: element }, item);
        if (problem) return `element ${i}: ${problem}`;
      }
      const checked = convertValue(column.type, JSON.stringify(value));
      return checked.ok ? null : checked.message;
    }
  }
}

/** Problems of one change record, each in the server's shape: `row 0, column 'id': reason`
 * (the record's 0-based index in the push, as the server names it). */
export function recordProblems(record: unknown, index: number, schema: Schema): string[] {
  const where = `row ${index}`;
  if (!record || typeof record !== 'object' || Array.isArray(record)) return [`${where}: expected an object like {"insert": {...}}`];
  const r = record as Record<string, unknown>;
  let data: unknown;
  if ('insert' in r) data = r.insert;
  else if ('delete' in r) data = r.delete;
  else if ('data' in r) {
    data = r.data;
    const w = r.weight;
    if (typeof w !== 'number' || !Number.isSafeInteger(w) || w === 0) return [`${where}: weight must be a nonzero integer, got ${shown(w)}`];
  } else return [`${where}: expected one of {"insert": row}, {"delete": row}, {"weight": w, "data": row}`];
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [`${where}: expected an object of column values`];
  const row = data as Record<string, unknown>;
  const known = new Set(schema.map((c) => c.name));
  const problems = Object.keys(row)
    .filter((k) => !known.has(k))
    .map((k) => `${where}: unknown column '${k}' (columns: ${[...known].join(', ')})`);
  for (const column of schema) {
    const problem = valueProblem(column, column.name in row ? row[column.name] : null);
    if (problem) problems.push(`${where}, column '${column.name}': ${problem}`);
  }
  return problems;
}

/** The text with NaN, Infinity and -Infinity outside strings written as marker strings. */
function markNonFinite(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (token) => (token.startsWith('"') ? token : JSON.stringify(`\u0000${token}`)));
}

/** The text of each member's value in a JSON object's text (one JSON.parse read): each push
 * is sent with the file's own digits, never a browser number's (2^53 + 1 would become 2^53). */
export function memberTexts(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const n = text.length;
  let i = text.indexOf('{') + 1;
  const skipSpace = () => {
    while (i < n && ' \t\r\n'.includes(text[i]!)) i += 1;
  };
  const stringEnd = (start: number) => {
    let j = start + 1;
    while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  for (;;) {
    skipSpace();
    if (i >= n || text[i] !== '"') break;
    const keyEnd = stringEnd(i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = keyEnd;
    skipSpace();
    i += 1; // the colon
    skipSpace();
    const start = i;
    let depth = 0;
    while (i < n) {
      const c = text[i]!;
      if (c === '"') {
        i = stringEnd(i);
        continue;
      }
      if (c === '[' || c === '{') depth += 1;
      else if (c === ']' || c === '}') {
        if (depth === 0) break;
        depth -= 1;
      } else if (c === ',' && depth === 0) break;
      i += 1;
    }
    out.set(key, text.slice(start, i).trim());
    skipSpace();
    if (text[i] === ',') i += 1;
  }
  return out;
}

export function parseJsonl(text: string, inputs: readonly RunInput[]): JsonlPreview {
  const byName = new Map(inputs.map((i) => [i.name, i]));
  const pushes: JsonlPush[] = [];
  const lineErrors: JsonlPreview['lineErrors'] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return; // blank lines separate nothing: skipped, as the CLI does
    let parsed: unknown;
    let text = raw;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      try {
        text = markNonFinite(raw); // NaN and Infinity: refused below naming the row and column
        parsed = JSON.parse(text);
      } catch {
        lineErrors.push({ line, message: `not JSON (${error instanceof Error ? error.message : String(error)})` });
        return;
      }
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      lineErrors.push({ line, message: 'must be an object {"<input>": [change records]}' });
      return;
    }
    const texts = memberTexts(text);
    for (const [name, records] of Object.entries(parsed as Record<string, unknown>)) {
      const input = byName.get(name);
      if (!input) {
        lineErrors.push({ line, message: `unknown input "${name}" (inputs: ${[...byName.keys()].join(', ')})` });
        continue;
      }
      if (!Array.isArray(records)) {
        pushes.push({ line, input: name, records: [], body: '[]', errors: ['must be an array of change records'] });
        continue;
      }
      const errors = records.flatMap((r, index) => recordProblems(r, index, input.schema));
      pushes.push({ line, input: name, records: records as ChangeRecord[], body: texts.get(name) ?? JSON.stringify(records), errors });
    }
  });
  return { pushes, lineErrors };
}
