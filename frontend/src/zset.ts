// Z-sets: multisets of rows with integer weights. Output views arrive as a snapshot
// (the integrated contents) followed by deltas; integrating a delta adds weights
// row by row, and a row whose weight reaches zero disappears.

import type { Row } from './api';

export interface WeightedRow {
  data: Row;
  weight: number;
}

/** Rows keyed by their canonical JSON, so equal rows collapse whatever their key order. */
export type ZSet = ReadonlyMap<string, WeightedRow>;

export const emptyZSet: ZSet = new Map();

/** JSON with object keys sorted recursively: {b:1,a:2} and {a:2,b:1} give the same string. */
export function canonicalKey(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value === undefined ? null : value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalKey(obj[k])}`).join(',')}}`;
}

/** Returns a new Z-set equal to `base` plus `delta` (base is not modified). */
export function integrate(base: ZSet, delta: readonly WeightedRow[]): ZSet {
  const result = new Map(base);
  for (const { data, weight } of delta) {
    if (!weight) continue;
    const key = canonicalKey(data);
    const current = result.get(key);
    const total = (current?.weight ?? 0) + weight;
    if (total === 0) result.delete(key);
    else result.set(key, { data: current?.data ?? data, weight: total });
  }
  return result;
}

export function fromRows(rows: readonly WeightedRow[]): ZSet {
  return integrate(emptyZSet, rows);
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    // Lists element by element ([2] before [10]), a prefix first.
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  const sa = typeof a === 'string' ? a : canonicalKey(a);
  const sb = typeof b === 'string' ? b : canonicalKey(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Orders rows column by column (in the given column order) for a stable table display. */
export function compareRows(a: Row, b: Row, columns: readonly string[]): number {
  for (const column of columns) {
    const c = compareValues(a[column], b[column]);
    if (c !== 0) return c;
  }
  return 0;
}

/** Column names in order of first appearance across the rows. */
export function columnsOf(rows: Iterable<WeightedRow>): string[] {
  const seen = new Set<string>();
  for (const { data } of rows) for (const key of Object.keys(data)) seen.add(key);
  return [...seen];
}

/** The Z-set's rows (with their keys), sorted for display. */
export function sortedRows(zset: ZSet): { columns: string[]; rows: (WeightedRow & { key: string })[] } {
  const rows = [...zset.entries()].map(([key, row]) => ({ key, ...row }));
  const columns = columnsOf(rows);
  rows.sort((a, b) => compareRows(a.data, b.data, columns));
  return { columns, rows };
}
