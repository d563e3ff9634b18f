import { describe, expect, it } from 'vitest';
import type { CircuitDocument } from '../api';
import { drawnGraph, frontierText, IDLE_COLOUR, layoutPositions, NODE_WIDTH, msText, nodeDecorations, rowsText, shareColour, timeShares } from './graphDecorations';

describe('time shares and colours', () => {
  it('splits the tick time between nodes', () => {
    expect(timeShares({ a: { ms: 3 }, b: { ms: 1 }, c: {} })).toEqual({ a: 0.75, b: 0.25, c: 0 });
    expect(timeShares({ a: { ms: 0 } })).toEqual({ a: 0 });
    // A fixed point's time includes its inner nodes': it does not count twice.
    expect(timeShares({ fp: { ms: 4 }, inner: { ms: 3 }, out: { ms: 1 } }, new Set(['fp']))).toEqual({ fp: 1, inner: 0.75, out: 0.25 });
  });

  it('maps a share to a colour: idle pale, then hotter and darker', () => {
    expect(shareColour(0)).toBe(IDLE_COLOUR);
    expect(shareColour(Number.NaN)).toBe(IDLE_COLOUR);
    expect(shareColour(0.01)).toBe('hsl(214 55% 94%)');
    expect(shareColour(0.5)).toBe('hsl(214 55% 81%)');
    expect(shareColour(1)).toBe('hsl(214 55% 68%)');
    // One neutral hue at every share: nothing reads as an error (no red, orange, yellow).
    for (const share of [0.01, 0.3, 0.65, 1]) expect(shareColour(share)).toMatch(/^hsl\(214 /);
    expect(shareColour(7)).toBe(shareColour(1));
  });

  it('decorates each node with its frontier, stats and colour', () => {
    const d = nodeDecorations(['in', 'agg', 'missing'], { in: { tick: 3 }, agg: { tick: 3, iteration: 2, converged: true } }, {
      in: { rows_in: 4, ms: 1 },
      agg: { rows_out: 2, state_rows: 9, ms: 3 },
    });
    expect(d.in).toEqual({ frontier: { tick: 3 }, stats: { rows_in: 4, ms: 1 }, share: 0.25, colour: shareColour(0.25) });
    expect(d.agg!.share).toBe(0.75);
    expect(d.missing).toEqual({ frontier: undefined, stats: undefined, share: 0, colour: IDLE_COLOUR });
  });
});

describe('badge texts', () => {
  it('shows tick, inner iteration and convergence, waterline', () => {
    expect(frontierText(undefined)).toBe('tick —');
    expect(frontierText({ tick: 4 })).toBe('tick 4');
    expect(frontierText({ tick: 4, iteration: 3, converged: true })).toBe('tick 4 · iter 3 ✓');
    expect(frontierText({ tick: 4, iteration: 3, converged: false })).toBe('tick 4 · iter 3 …');
    expect(frontierText({ tick: 4, waterline: '2026-01-01T10:00:00' })).toBe('tick 4 · wl 2026-01-01T10:00:00');
  });

  it('shows rows and ms with the share', () => {
    expect(rowsText({ rows_in: 3, rows_out: 2, state_rows: 10 })).toBe('in 3 · out 2 · state 10');
    expect(rowsText(undefined)).toBe('');
    expect(msText({ ms: 1.234 }, 0.5)).toBe('1.23 ms · 50%');
    expect(msText({ ms: 123.4 }, 1)).toBe('123 ms · 100%');
  });
});

describe('layoutPositions', () => {
  it("keeps the document's positions and lays out the others by depth", () => {
    const doc: CircuitDocument = {
      format: 'dbspweb.circuit',
      version: 1,
      nodes: [
        { id: 'a', kind: 'input', position: { x: 5, y: 6 } },
        { id: 'b', kind: 'filter' },
        { id: 'c', kind: 'output' },
        { id: 'd', kind: 'output' },
      ],
      edges: [
        { from: { node: 'a', port: 'out' }, to: { node: 'b', port: 'in' } },
        { from: { node: 'b', port: 'out' }, to: { node: 'c', port: 'in' } },
        { from: { node: 'b', port: 'out' }, to: { node: 'd', port: 'in' } },
      ],
    };
    expect(layoutPositions(doc)).toEqual({ a: { x: 5, y: 6 }, b: { x: 240, y: 0 }, c: { x: 480, y: 0 }, d: { x: 480, y: 130 } });
  });
});

describe('drawnGraph', () => {
  const doc = {
    format: 'dbspweb.circuit',
    version: 1,
    nodes: [
      { id: 'edges', kind: 'input', position: { x: 0, y: 100 } },
      {
        id: 'tc',
        kind: 'fixedpoint',
        position: { x: 250, y: 0 },
        subcircuit: {
          nodes: [
            { id: 'edges_in', kind: 'import', position: { x: 0, y: 100 } },
            { id: 'paths', kind: 'distinct', position: { x: 400, y: 100 } },
            { id: 'closure_out', kind: 'export', position: { x: 800, y: 100 } },
          ],
          edges: [
            { from: { node: 'edges_in', port: 'out' }, to: { node: 'paths', port: 'in' } },
            { from: { node: 'paths', port: 'out' }, to: { node: 'closure_out', port: 'in' } },
          ],
        },
      },
      { id: 'closure', kind: 'output', position: { x: 600, y: 100 } },
    ],
    edges: [
      { from: { node: 'edges', port: 'out' }, to: { node: 'tc', port: 'edges_in' } },
      { from: { node: 'tc', port: 'closure_out' }, to: { node: 'closure', port: 'in' } },
    ],
  } as unknown as CircuitDocument;

  it('draws a fixed point as a group around its subcircuit, wired through its import and export', () => {
    const { nodes, edges } = drawnGraph(doc);
    expect(nodes.map((n) => [n.node.id, n.parentId ?? null])).toEqual([
      ['edges', null],
      ['tc', null],
      ['edges_in', 'tc'],
      ['paths', 'tc'],
      ['closure_out', 'tc'],
      ['closure', null],
    ]);
    const tc = nodes.find((n) => n.node.id === 'tc')!;
    expect(tc.size).toEqual({ width: 800 + NODE_WIDTH + 48, height: 90 + 70 + 24 });
    expect(nodes.find((n) => n.node.id === 'edges_in')!.position).toEqual({ x: 24, y: 70 });
    // The output right of the group moved right just past it (group from x 250, 60 apart).
    expect(nodes.find((n) => n.node.id === 'closure')!.position).toEqual({ x: 250 + tc.size!.width + 60, y: 100 });
    expect(edges.map((e) => [e.source, e.target])).toEqual([
      ['edges', 'edges_in'],
      ['closure_out', 'closure'],
      ['edges_in', 'paths'],
      ['paths', 'closure_out'],
    ]);
  });
});
