// Circuit document -> React Flow nodes and edges (pure; the canvas renders these).
// A fixed point becomes a group node; its subcircuit's nodes are its children (positions
// relative to it), and its ports are handles named after its import/delta0/export nodes.

import type { Edge, Node } from '@xyflow/react';
import { allEdges, edgeKey, FIXEDPOINT, portsOf, type Doc, type DocNode, type PortCatalog } from './model';

export interface OperatorData extends Record<string, unknown> {
  node: DocNode;
  inputs: string[];
  outputs: string[];
  /** Id of the fixed point holding this node, if any. */
  parent: string | null;
}

export type FlowNode = Node<OperatorData>;
export type FlowEdge = Edge<{ scope: string | null }>;

export interface FlowOptions {
  catalog: PortCatalog;
  measured?: Record<string, { width: number; height: number }>;
  selectedNodes?: Set<string>;
  selectedEdges?: Set<string>;
  /** In-flight drag positions (top-level or relative to the parent). */
  positions?: Record<string, { x: number; y: number }>;
  badEdges?: Set<string>;
  /** Class per node id (e.g. inserted plan nodes). */
  nodeClass?: (node: DocNode) => string | undefined;
}

export const DEFAULT_SIZE = { width: 200, height: 64 };
const GROUP_PAD = { right: 40, bottom: 40 };
const GROUP_MIN = { width: 320, height: 200 };

export function docToFlow(doc: Doc, options: FlowOptions): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const nodes: FlowNode[] = [];
  const edges: FlowEdge[] = [];
  const sizeOf = (id: string) => options.measured?.[id] ?? DEFAULT_SIZE;
  // Ports wired in the document but unknown to the catalog still get handles.
  const used = new Map<string, { inputs: Set<string>; outputs: Set<string> }>();
  const use = (node: string) => {
    let u = used.get(node);
    if (!u) used.set(node, (u = { inputs: new Set(), outputs: new Set() }));
    return u;
  };
  for (const { edge } of allEdges(doc)) {
    use(edge.from.node).outputs.add(edge.from.port);
    use(edge.to.node).inputs.add(edge.to.port);
  }

  const place = (scope: { nodes: DocNode[]; edges: Doc['edges'] }, parent: string | null) => {
    for (const node of scope.nodes) {
      const known = portsOf(node, options.catalog);
      const u = used.get(node.id);
      const ports = {
        inputs: [...known.inputs, ...[...(u?.inputs ?? [])].filter((p) => !known.inputs.includes(p))],
        outputs: [...known.outputs, ...[...(u?.outputs ?? [])].filter((p) => !known.outputs.includes(p))],
      };
      const position = options.positions?.[node.id] ?? node.position ?? { x: 0, y: 0 };
      const flowNode: FlowNode = {
        id: node.id,
        type: node.kind === FIXEDPOINT ? 'fixedpoint' : 'operator',
        position: { ...position },
        data: { node, inputs: ports.inputs, outputs: ports.outputs, parent },
        selected: options.selectedNodes?.has(node.id) ?? false,
        className: options.nodeClass?.(node),
      };
      if (parent) {
        flowNode.parentId = parent;
        flowNode.extent = 'parent';
      }
      const measured = options.measured?.[node.id];
      if (measured && node.kind !== FIXEDPOINT) flowNode.measured = measured;
      if (node.kind === FIXEDPOINT) {
        const children = node.subcircuit?.nodes ?? [];
        let width = GROUP_MIN.width;
        let height = GROUP_MIN.height;
        for (const child of children) {
          const p = options.positions?.[child.id] ?? child.position ?? { x: 0, y: 0 };
          const s = child.kind === FIXEDPOINT ? GROUP_MIN : sizeOf(child.id);
          width = Math.max(width, p.x + s.width + GROUP_PAD.right);
          height = Math.max(height, p.y + s.height + GROUP_PAD.bottom);
        }
        flowNode.style = { width, height };
        flowNode.width = width;
        flowNode.height = height;
        flowNode.measured = { width, height };
      }
      nodes.push(flowNode);
      if (node.subcircuit) place(node.subcircuit, node.id);
    }
    for (const e of scope.edges ?? []) {
      const key = edgeKey(e);
      edges.push({
        id: key,
        source: e.from.node,
        sourceHandle: e.from.port,
        target: e.to.node,
        targetHandle: e.to.port,
        selected: options.selectedEdges?.has(key) ?? false,
        className: options.badEdges?.has(key) ? 'edge-bad' : undefined,
        data: { scope: parent },
      });
    }
  };
  place(doc, null);
  return { nodes, edges };
}

/** The edge of the document a React Flow edge id stands for. */
export function edgeFromId(id: string): { from: { node: string; port: string }; to: { node: string; port: string } } | null {
  const match = /^([^.]+)\.(.+)->([^.]+)\.(.+)$/.exec(id);
  if (!match) return null;
  const [, fn = '', fp = '', tn = '', tp = ''] = match;
  return { from: { node: fn, port: fp }, to: { node: tn, port: tp } };
}
