// Auto-layout with elkjs (layered, left to right by default; top to bottom for narrow
// panes), each fixed point's subcircuit first so the group's size is known when its own
// scope is laid out.

import type { ElkNode } from 'elkjs/lib/elk.bundled.js';
import { DEFAULT_SIZE } from './flow';
import { setPositions, type Doc, type DocEdge, type DocNode } from './model';

// ELK (about 1.4 MB) loads on the first layout, not with the editor.
type Elk = { layout(graph: ElkNode): Promise<ElkNode> };
let elkLoading: Promise<Elk> | null = null;
function loadElk(): Promise<Elk> {
  elkLoading ??= import('elkjs/lib/elk.bundled.js').then((m) => new m.default());
  return elkLoading;
}

const OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '70',
  'elk.spacing.nodeNode': '40',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
};

type Sizes = Record<string, { width: number; height: number }>;

/** Which way data flows in the layout: 'RIGHT' (the editor) or 'DOWN' (a tall, narrow pane). */
export type LayoutDirection = 'RIGHT' | 'DOWN';

async function layoutScope(
  scope: { nodes: DocNode[]; edges: DocEdge[] },
  measured: Sizes,
  positions: Record<string, { x: number; y: number }>,
  origin: { x: number; y: number },
  direction: LayoutDirection,
): Promise<{ width: number; height: number }> {
  const sizes: Sizes = {};
  for (const node of scope.nodes) {
    if (node.subcircuit) {
      const inner = await layoutScope(node.subcircuit, measured, positions, { x: 30, y: 50 }, direction);
      sizes[node.id] = { width: Math.max(320, inner.width + 60), height: Math.max(200, inner.height + 90) };
    } else {
      sizes[node.id] = measured[node.id] ?? DEFAULT_SIZE;
    }
  }
  const ids = new Set(scope.nodes.map((n) => n.id));
  const elk = await loadElk();
  const graph: ElkNode = await elk.layout({
    id: 'root',
    layoutOptions: { ...OPTIONS, 'elk.direction': direction },
    children: scope.nodes.map((n) => ({ id: n.id, width: (sizes[n.id] ?? DEFAULT_SIZE).width, height: (sizes[n.id] ?? DEFAULT_SIZE).height })),
    edges: scope.edges
      .filter((e) => ids.has(e.from.node) && ids.has(e.to.node))
      .map((e, i) => ({ id: `e${i}`, sources: [e.from.node], targets: [e.to.node] })),
  });
  for (const child of graph.children ?? []) {
    positions[child.id] = { x: (child.x ?? 0) + origin.x, y: (child.y ?? 0) + origin.y };
  }
  return { width: graph.width ?? 0, height: graph.height ?? 0 };
}

/** The document with every node placed by ELK (sizes: measured ones, else the default). */
export async function autoLayout(doc: Doc, measured: Sizes = {}, direction: LayoutDirection = 'RIGHT'): Promise<Doc> {
  const positions: Record<string, { x: number; y: number }> = {};
  await layoutScope(doc, measured, positions, { x: 0, y: 0 }, direction);
  return setPositions(doc, positions);
}

/** True if some node has no position (e.g. nodes the plan compiler inserted). */
export function needsLayout(doc: Doc): boolean {
  const walk = (nodes: DocNode[]): boolean => nodes.some((n) => !n.position || (n.subcircuit ? walk(n.subcircuit.nodes) : false));
  return walk(doc.nodes ?? []);
}
