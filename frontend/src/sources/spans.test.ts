import { describe, expect, it } from 'vitest';
import type { Doc } from '../editor/model';
import { nodeRanges, nodesAt, problemRange, rangeOf, segments } from './spans';

const SQL = 'CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS\nSELECT a FROM t WHERE a > 1;\n';

describe('source spans', () => {
  it("reads SQL's inclusive {start, end} spans", () => {
    const r = rangeOf(SQL, { start: { line: 2, column: 13 }, end: { line: 2, column: 13 } })!;
    expect(SQL.slice(r.from, r.to)).toBe('v');
    const where = rangeOf(SQL, { start: { line: 3, column: 23 }, end: { line: 3, column: 27 } })!;
    expect(SQL.slice(where.from, where.to)).toBe('a > 1');
  });

  it("reads Datalog's exclusive spans", () => {
    const dl = '.decl e(a: number)\np(x) :- e(x).\n';
    const r = rangeOf(dl, { line: 2, column: 1, end_line: 2, end_column: 14, rule: 1 })!;
    expect(dl.slice(r.from, r.to)).toBe('p(x) :- e(x).');
  });

  it('marks the word at a bare line:column', () => {
    const r = problemRange(SQL, { message: 'unknown column', line: 3, column: 10 })!;
    expect(SQL.slice(r.from, r.to)).toBe('FROM');
  });

  it('finds the innermost nodes at a cursor and every node a selection overlaps', () => {
    const doc = {
      format: 'dbspweb.circuit',
      version: 1,
      edges: [],
      nodes: [
        { id: 'v', kind: 'output', params: {}, source: { start: { line: 2, column: 13 }, end: { line: 2, column: 13 } } },
        { id: 'view', kind: 'map', params: {}, source: { start: { line: 2, column: 1 }, end: { line: 3, column: 28 } } },
        { id: 'where', kind: 'filter', params: {}, source: { start: { line: 3, column: 23 }, end: { line: 3, column: 27 } } },
        { id: 'drawn', kind: 'map', params: {} },
      ],
    } as unknown as Doc;
    const ranges = nodeRanges(doc, SQL);
    expect(ranges.map((r) => r.id)).toEqual(['v', 'view', 'where']);
    const at = (line: number, column: number) => SQL.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0) + column - 1;
    expect(nodesAt(ranges, { from: at(3, 25), to: at(3, 25) })).toEqual(['where']);
    expect(nodesAt(ranges, { from: at(3, 2), to: at(3, 2) })).toEqual(['view']);
    expect(nodesAt(ranges, { from: at(2, 10), to: at(3, 24) }).sort()).toEqual(['v', 'view', 'where']);
    expect(nodesAt(ranges, { from: 0, to: 0 })).toEqual([]);
  });

  it('cuts the text into marked pieces', () => {
    const pieces = segments('abcdef', [{ range: { from: 1, to: 4 }, kind: 'node' }, { range: { from: 3, to: 5 }, kind: 'error' }]);
    expect(pieces).toEqual([
      { text: 'a', kinds: [] },
      { text: 'bc', kinds: ['node'] },
      { text: 'd', kinds: ['error', 'node'] },
      { text: 'e', kinds: ['error'] },
      { text: 'f', kinds: [] },
    ]);
    expect(pieces.map((p) => p.text).join('')).toBe('abcdef');
  });
});
