import { describe, expect, it } from 'vitest';
import { dropCorner, freeOffset, freeSpot, intersects, overlapping } from './placement';
import type { Doc } from './model';

const doc = (nodes: Array<[string, number, number]>): Doc => ({
  format: 'dbspweb.circuit',
  version: 1,
  nodes: nodes.map(([id, x, y]) => ({ id, kind: 'map', position: { x, y } })),
  edges: [],
});
const sizes = { a: { width: 230, height: 60 }, b: { width: 150, height: 50 }, c: { width: 150, height: 50 } };

describe('placement', () => {
  it('sees the Big orders pile-up (a wide input on its filter) and nothing in a laid-out row', () => {
    expect(overlapping(doc([['a', 0, 0], ['b', 220, 0]]), sizes)).toBe(true);
    expect(overlapping(doc([['a', 0, 0], ['b', 300, 0], ['c', 520, 0]]), sizes)).toBe(false);
  });

  it('puts a pasted fragment where it covers no node, not on the original', () => {
    const d = doc([['a', 0, 0], ['b', 300, 0]]);
    const fragment = doc([['b', 300, 0]]);
    const off = freeOffset(d, fragment, sizes);
    const pasted = doc([['b_copy', 300 + off.x, 0 + off.y]]);
    expect(overlapping({ nodes: [...d.nodes, ...pasted.nodes] }, { ...sizes, b_copy: sizes.b })).toBe(false);
    expect(off).toEqual({ x: 0, y: 74 }); // just below the original
  });

  it('moves a drop near the edge inside the visible canvas', () => {
    const view = { x: 0, y: 0, width: 800, height: 500 };
    const corner = dropCorner({ x: 795, y: 495 }, view);
    expect(corner.x + 200).toBeLessThanOrEqual(800);
    expect(corner.y + 64).toBeLessThanOrEqual(500);
    expect(dropCorner({ x: 400, y: 200 }, view)).toEqual({ x: 300, y: 180 });
  });
});

describe('freeSpot', () => {
  const view = { x: 0, y: 0, width: 800, height: 500 };
  const size = { width: 160, height: 50 };

  it('keeps a corner that covers nothing', () => {
    expect(freeSpot({ x: 100, y: 100 }, [{ x: 400, y: 100, width: 160, height: 50 }], view, size)).toEqual({ x: 100, y: 100 });
  });

  it('moves a node dropped onto another to the nearest free place, inside the view', () => {
    const other = { x: 300, y: 200, width: 160, height: 50 };
    const spot = freeSpot({ x: 300, y: 200 }, [other], view, size);
    expect(intersects({ ...spot, ...size }, other)).toBe(false);
    expect(spot.x).toBeGreaterThanOrEqual(0);
    expect(spot.y + size.height).toBeLessThanOrEqual(500);
    // the nearest: just above or below it, not across the canvas
    expect(Math.abs(spot.x - 300) + Math.abs(spot.y - 200)).toBeLessThanOrEqual(100);
  });

  it('keeps the corner when the view has no room left', () => {
    const full = { x: 0, y: 0, width: 800, height: 500 };
    expect(freeSpot({ x: 10, y: 10 }, [full], view, size)).toEqual({ x: 10, y: 10 });
  });
});
