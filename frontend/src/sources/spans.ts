// Source spans of compiled circuits (SQL's {start, end} end inclusive; Datalog's
// {line, column, end_line, end_column} end exclusive; both 1-based) as character
// ranges of the text, and the links both ways: nodes -> ranges, cursor -> nodes.

import type { DocNode, Doc } from '../editor/model';

export type Language = 'sql' | 'datalog';

/** A half-open character range [from, to) of the text. */
export interface Range {
  from: number;
  to: number;
}

interface Position {
  line: number;
  column: number;
}

/** A problem of a compile, as /api/sql/compile/ and /api/datalog/compile/ give it. */
export interface SourceProblem {
  message: string;
  line?: number;
  column?: number;
  node?: string;
  source?: unknown;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function offsetOf(starts: number[], text: string, p: Position): number {
  const lineStart = starts[Math.min(Math.max(p.line, 1), starts.length) - 1] ?? 0;
  return Math.min(lineStart + Math.max(p.column, 1) - 1, text.length);
}

const isPosition = (v: unknown): v is Position =>
  !!v && typeof (v as Position).line === 'number' && typeof (v as Position).column === 'number';

/** The character range of a node's `source` in the text, or null when it has none. */
export function rangeOf(text: string, source: unknown, starts = lineStarts(text)): Range | null {
  if (!source || typeof source !== 'object') return null;
  const s = source as { start?: unknown; end?: unknown; line?: number; column?: number; end_line?: number; end_column?: number };
  if (isPosition(s.start) && isPosition(s.end)) {
    const from = offsetOf(starts, text, s.start);
    return { from, to: Math.max(from + 1, Math.min(offsetOf(starts, text, s.end) + 1, text.length)) };
  }
  if (typeof s.line === 'number' && typeof s.column === 'number') {
    const from = offsetOf(starts, text, { line: s.line, column: s.column });
    const to = typeof s.end_line === 'number' && typeof s.end_column === 'number'
      ? offsetOf(starts, text, { line: s.end_line, column: s.end_column })
      : wordEnd(text, from);
    return { from, to: Math.max(to, from + 1) };
  }
  return null;
}

/** The end of the word (or single character) at an offset: where a bare line:column is marked. */
function wordEnd(text: string, from: number): number {
  let to = from;
  while (to < text.length && /[\w$."]/.test(text[to]!)) to++;
  return Math.max(to, Math.min(from + 1, text.length));
}

/** Every node (subcircuits too) with its source range. */
export function nodeRanges(doc: Doc, text: string): { id: string; range: Range }[] {
  const starts = lineStarts(text);
  const out: { id: string; range: Range }[] = [];
  const walk = (nodes: DocNode[]) => {
    for (const node of nodes) {
      const range = rangeOf(text, node.source, starts);
      if (range) out.push({ id: node.id, range });
      if (node.subcircuit) walk(node.subcircuit.nodes);
    }
  };
  walk(doc.nodes ?? []);
  return out;
}

/** The nodes a cursor or selection points at: for a selection, every node whose range
 *  overlaps it; for a cursor, the nodes with the smallest range holding it. */
export function nodesAt(ranges: { id: string; range: Range }[], selection: Range): string[] {
  if (selection.to > selection.from) {
    return ranges.filter(({ range }) => range.from < selection.to && selection.from < range.to).map((r) => r.id);
  }
  const holding = ranges.filter(({ range }) => range.from <= selection.from && selection.from < range.to);
  if (!holding.length) return [];
  const smallest = Math.min(...holding.map(({ range }) => range.to - range.from));
  return holding.filter(({ range }) => range.to - range.from === smallest).map((r) => r.id);
}

/** The range of a problem: its `source` span, else the word at its line:column. */
export function problemRange(text: string, problem: SourceProblem): Range | null {
  return rangeOf(text, problem.source) ?? (typeof problem.line === 'number' ? rangeOf(text, { line: problem.line, column: problem.column ?? 1 }) : null);
}

/** The text cut into pieces, each marked with the kinds of range covering it (for the
 *  highlight layer behind the text area). */
export function segments(text: string, marks: { range: Range; kind: string }[]): { text: string; kinds: string[] }[] {
  const cuts = new Set<number>([0, text.length]);
  for (const { range } of marks) {
    cuts.add(Math.max(0, Math.min(range.from, text.length)));
    cuts.add(Math.max(0, Math.min(range.to, text.length)));
  }
  const points = Array.from(cuts).sort((a, b) => a - b);
  const out: { text: string; kinds: string[] }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [from, to] = [points[i]!, points[i + 1]!];
    const kinds = Array.from(new Set(marks.filter(({ range }) => range.from <= from && to <= range.to).map((m) => m.kind))).sort();
    out.push({ text: text.slice(from, to), kinds });
  }
  return out;
}
