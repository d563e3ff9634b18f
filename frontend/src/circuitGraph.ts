// Reading a circuit document for display: nodes in data-flow order with their inputs.

import type { CircuitDocument, CircuitEdge, CircuitNode } from './api';

export interface NodeView {
  node: CircuitNode;
  /** Incoming edges, e.g. "orders.out → in". */
  inputs: CircuitEdge[];
}

/** Topological order (sources first); ties and cycles keep document order. */
export function orderNodes(document: CircuitDocument): NodeView[] {
  const nodes = document.nodes ?? [];
  const edges = document.edges ?? [];
  const ids = new Set(nodes.map((n) => n.id));
  const indegree = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  const outgoing = new Map<string, string[]>();
  for (const edge of edges) {
    if (!ids.has(edge.from.node) || !ids.has(edge.to.node)) continue;
    indegree.set(edge.to.node, (indegree.get(edge.to.node) ?? 0) + 1);
    outgoing.set(edge.from.node, [...(outgoing.get(edge.from.node) ?? []), edge.to.node]);
  }

  const placed = new Set<string>();
  const order: CircuitNode[] = [];
  while (order.length < nodes.length) {
    // First unplaced node with no remaining inputs; on a cycle, the first unplaced one.
    const next =
      nodes.find((n) => !placed.has(n.id) && (indegree.get(n.id) ?? 0) === 0) ??
      nodes.find((n) => !placed.has(n.id));
    if (!next) break;
    placed.add(next.id);
    order.push(next);
    for (const target of outgoing.get(next.id) ?? []) {
      indegree.set(target, (indegree.get(target) ?? 0) - 1);
    }
  }

  return order.map((node) => ({ node, inputs: edges.filter((e) => e.to.node === node.id) }));
}
