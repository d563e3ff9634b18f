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
  errors: string[];
}

export interface JsonlPreview {
  pushes: JsonlPush[];
  /** Lines that are not a push at all (bad JSON, not an object, unknown input). */
  lineErrors: { line: number; message: string }[];
}

type Schema = readonly (Column & { nullable?: boolean })[];

function valueProblem(column: Column & { nullable?: boolean }, value: unknown): string | null {
  if (value === null) return column.nullable === false ? 'must not be null (the column is not nullable)' : null;
  switch (column.type) {
    case 'bigint':
      return typeof value === 'number' && Number.isInteger(value) ? null : `must be a whole number, got ${JSON.stringify(value)}`;
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? null : `must be a number, got ${JSON.stringify(value)}`;
    case 'string':
      return typeof value === 'string' ? null : `must be a string, got ${JSON.stringify(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? null : `must be true or false, got ${JSON.stringify(value)}`;
    case 'date':
    case 'timestamp': {
      if (typeof value !== 'string') return `must be a ${column.type} string, got ${JSON.stringify(value)}`;
      const checked = checkTemporal(column.type, value);
      return checked.ok ? null : `${checked.message}, got ${JSON.stringify(value)}`;
    }
    default: {
      // a list column: the push form's own check of JSON array text
      const checked = convertValue(column.type, JSON.stringify(value));
      return checked.ok ? null : checked.message;
    }
  }
}

/** Problems of one change record, each naming the record (0-based, as in the JSON) and column. */
export function recordProblems(record: unknown, index: number, schema: Schema): string[] {
  const where = `record ${index}`;
  if (!record || typeof record !== 'object' || Array.isArray(record)) return [`${where} must be an object such as {"insert": {...}}`];
  const r = record as Record<string, unknown>;
  let data: unknown;
  if ('insert' in r) data = r.insert;
  else if ('delete' in r) data = r.delete;
  else if ('data' in r) {
    data = r.data;
    const w = r.weight;
    if (typeof w !== 'number' || !Number.isSafeInteger(w) || w === 0) return [`${where} weight must be a nonzero whole number, got ${JSON.stringify(w)}`];
  } else return [`${where} needs "insert", "delete" or "weight" and "data"`];
  if (!data || typeof data !== 'object' || Array.isArray(data)) return [`${where} row must be an object of column values`];
  const row = data as Record<string, unknown>;
  const known = new Set(schema.map((c) => c.name));
  const problems = Object.keys(row)
    .filter((k) => !known.has(k))
    .map((k) => `${where}: unknown column "${k}" (columns: ${[...known].join(', ')})`);
  for (const column of schema) {
    const problem = valueProblem(column, column.name in row ? row[column.name] : null);
    if (problem) problems.push(`${where}: ${column.name} ${problem}`);
  }
  return problems;
}

export function parseJsonl(text: string, inputs: readonly RunInput[]): JsonlPreview {
  const byName = new Map(inputs.map((i) => [i.name, i]));
  const pushes: JsonlPush[] = [];
  const lineErrors: JsonlPreview['lineErrors'] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return; // blank lines separate nothing: skipped, as the CLI does
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      lineErrors.push({ line, message: `not JSON (${error instanceof Error ? error.message : String(error)})` });
      return;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      lineErrors.push({ line, message: 'must be an object {"<input>": [change records]}' });
      return;
    }
    for (const [name, records] of Object.entries(parsed as Record<string, unknown>)) {
      const input = byName.get(name);
      if (!input) {
        lineErrors.push({ line, message: `unknown input "${name}" (inputs: ${[...byName.keys()].join(', ')})` });
        continue;
      }
      if (!Array.isArray(records)) {
        pushes.push({ line, input: name, records: [], errors: ['must be an array of change records'] });
        continue;
      }
      const errors = records.flatMap((r, index) => recordProblems(r, index, input.schema));
      pushes.push({ line, input: name, records: records as ChangeRecord[], errors });
    }
  });
  return { pushes, lineErrors };
}
