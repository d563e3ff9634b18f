import { describe, expect, it } from 'vitest';
import type { CircuitDocument } from './api';
import { orderNodes } from './circuitGraph';

const edge = (from: string, to: string) => ({ from: { node: from, port: 'out' }, to: { node: to, port: 'in' } });

describe('orderNodes', () => {
  it('lists nodes sources first, with their incoming edges', () => {
    const doc: CircuitDocument = {
      format: 'dbspweb.circuit',
      version: 1,
      nodes: [
        { id: 'view', kind: 'output', params: {} },
        { id: 'big', kind: 'filter', params: { predicate: 'amount > 100' } },
        { id: 'orders', kind: 'input', params: {} },
      ],
      edges: [edge('orders', 'big'), edge('big', 'view')],
    };
    const ordered = orderNodes(doc);
    expect(ordered.map((n) => n.node.id)).toEqual(['orders', 'big', 'view']);
    expect(ordered[1]?.inputs).toEqual([edge('orders', 'big')]);
  });

  it('keeps every node even with a cycle or dangling edge', () => {
    const doc: CircuitDocument = {
      format: 'dbspweb.circuit',
      version: 1,
      nodes: [
        { id: 'a', kind: 'x' },
        { id: 'b', kind: 'y' },
      ],
      edges: [edge('a', 'b'), edge('b', 'a'), edge('ghost', 'a')],
    };
    expect(orderNodes(doc).map((n) => n.node.id)).toEqual(['a', 'b']);
  });
});
