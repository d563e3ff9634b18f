import { describe, expect, it } from 'vitest';
import { autoLayout } from './layout';
import type { Doc } from './model';

// A chain a -> b -> c: the layout follows the data flow, left to right in the editor and
// top to bottom in narrow panes (the compiled plan beside the circuit).
const chain: Doc = {
  nodes: [
    { id: 'a', kind: 'input', params: {} },
    { id: 'b', kind: 'filter', params: {} },
    { id: 'c', kind: 'output', params: {} },
  ],
  edges: [
    { from: { node: 'a', port: 'out' }, to: { node: 'b', port: 'in' } },
    { from: { node: 'b', port: 'out' }, to: { node: 'c', port: 'in' } },
  ],
} as Doc;

const positions = (doc: Doc) => Object.fromEntries(doc.nodes.map((n) => [n.id, n.position!]));

describe('autoLayout', () => {
  it('places a chain left to right by default', async () => {
    const p = positions(await autoLayout(chain));
    expect(p.a!.x).toBeLessThan(p.b!.x);
    expect(p.b!.x).toBeLessThan(p.c!.x);
  });

  it('places it top to bottom when asked to (narrow panes)', async () => {
    const p = positions(await autoLayout(chain, {}, 'DOWN'));
    expect(p.a!.y).toBeLessThan(p.b!.y);
    expect(p.b!.y).toBeLessThan(p.c!.y);
    expect(Math.abs(p.a!.x - p.c!.x)).toBeLessThan(1);
  });
});
