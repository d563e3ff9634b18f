// Small display helpers shared by the components.

import type { Row } from './api';

/** A cell's text: strings as they are, lists as compact JSON (`["a","b"]`, `[1,null,3]`). */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** `{id: 1, amount: 50, name: "bob", tags: ["a","b"]}`: keys bare, strings quoted, lists as JSON. */
export function formatRow(row: Row): string {
  const parts = Object.entries(row).map(
    ([key, value]) => `${key}: ${typeof value === 'string' ? JSON.stringify(value) : formatValue(value)}`,
  );
  return `{${parts.join(', ')}}`;
}

/** `+1`, `-1`, `+3`. */
export function formatWeight(weight: number): string {
  return weight > 0 ? `+${weight}` : String(weight);
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
