// What the run page draws on each node of the circuit graph: its frontier (last complete
// tick, inner iteration and convergence inside fixed points, waterline for windows),
// rows in/out, state rows and milliseconds of the latest tick, and a colour for the
// node's share of that tick's time. Pure functions; NodeBadge and RunGraph render them.

import type { CircuitDocument, CircuitNode } from '../api';
import type { Frontier, FrontierEntry, NodeStats, Stats } from '../api/runs';

export interface NodeDecoration {
  frontier?: FrontierEntry;
  stats?: NodeStats;
  /** This node's share of the tick's time, 0..1. */
  share: number;
  /** Fill colour for that share. */
  colour: string;
}

/** Each node's ms over the sum of all nodes' ms (all 0 when nothing was timed). Nodes in
 * `containers` (fixed points, whose time includes their inner nodes') get a share but do
 * not count towards the total. */
export function timeShares(stats: Stats, containers: ReadonlySet<string> = new Set()): Record<string, number> {
  const total = Object.entries(stats).reduce(
    (sum, [node, s]) => sum + (!containers.has(node) && typeof s?.ms === 'number' && s.ms > 0 ? s.ms : 0),
    0,
  );
  const shares: Record<string, number> = {};
  for (const [node, s] of Object.entries(stats)) {
    const ms = typeof s?.ms === 'number' && s.ms > 0 ? s.ms : 0;
    shares[node] = total > 0 ? Math.min(1, ms / total) : 0;
  }
  return shares;
}

export const IDLE_COLOUR = 'hsl(214 30% 97%)';

/** The share scale: one neutral hue (blue-grey) from pale (a small share) to a medium
 * shade (all the tick's time). No reds or yellows: a node's colour says how much of the
 * tick it took, never that it failed. Dark text stays readable on every shade. */
export const SCALE_HUE = 214;
const LIGHT_MAX = 94;
const LIGHT_MIN = 68;

export function shareColour(share: number): string {
  if (!Number.isFinite(share) || share <= 0) return IDLE_COLOUR;
  const s = Math.min(1, share);
  return `hsl(${SCALE_HUE} 55% ${Math.round(LIGHT_MAX - (LIGHT_MAX - LIGHT_MIN) * s)}%)`;
}

/** The CSS gradient of the scale, for the graph's legend. */
export const SHARE_GRADIENT = `linear-gradient(to right, ${shareColour(0.001)}, ${shareColour(1)})`;

export function nodeDecorations(
  nodeIds: readonly string[],
  frontier: Frontier,
  stats: Stats,
  containers: ReadonlySet<string> = new Set(),
): Record<string, NodeDecoration> {
  const shares = timeShares(stats, containers);
  const result: Record<string, NodeDecoration> = {};
  for (const id of nodeIds) {
    const share = shares[id] ?? 0;
    result[id] = { frontier: frontier[id], stats: stats[id], share, colour: shareColour(share) };
  }
  return result;
}

function formatWaterline(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** "tick 4", "tick 4 · iter 3 ✓" (converged), "tick 4 · iter 3 …" (still iterating), "… · wl 12". */
export function frontierText(frontier: FrontierEntry | undefined): string {
  if (!frontier || typeof frontier.tick !== 'number') return 'tick —';
  const parts = [`tick ${frontier.tick}`];
  if (typeof frontier.iteration === 'number') {
    parts.push(`iter ${frontier.iteration}${frontier.converged === true ? ' ✓' : frontier.converged === false ? ' …' : ''}`);
  } else if (frontier.converged !== undefined) {
    parts.push(frontier.converged ? 'converged' : 'iterating');
  }
  if (frontier.waterline !== undefined && frontier.waterline !== null) parts.push(`wl ${formatWaterline(frontier.waterline)}`);
  return parts.join(' · ');
}

/** "in 3 · out 2", with the parts that were measured. */
export function rowsText(stats: NodeStats | undefined): string {
  if (!stats) return '';
  const parts: string[] = [];
  if (typeof stats.rows_in === 'number') parts.push(`in ${stats.rows_in}`);
  if (typeof stats.rows_out === 'number') parts.push(`out ${stats.rows_out}`);
  if (typeof stats.state_rows === 'number') parts.push(`state ${stats.state_rows}`);
  return parts.join(' · ');
}

export function msText(stats: NodeStats | undefined, share: number): string {
  if (!stats || typeof stats.ms !== 'number') return '';
  const ms = stats.ms >= 100 ? stats.ms.toFixed(0) : stats.ms >= 10 ? stats.ms.toFixed(1) : stats.ms.toFixed(2);
  return `${ms} ms · ${Math.round(share * 100)}%`;
}

const COLUMN_WIDTH = 240;
const ROW_HEIGHT = 130;

/** The document's positions; nodes without one are laid out by data-flow depth. */
export function layoutPositions(document: CircuitDocument): Record<string, { x: number; y: number }> {
  const nodes = document.nodes ?? [];
  const edges = document.edges ?? [];
  const depth = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  // Longest path from a source, bounded by the node count (cycles through z^-1 stop there).
  for (let round = 0; round < nodes.length; round++) {
    let changed = false;
    for (const e of edges) {
      const from = depth.get(e.from.node);
      const to = depth.get(e.to.node);
      if (from === undefined || to === undefined) continue;
      if (from + 1 > to && from + 1 < nodes.length) {
        depth.set(e.to.node, from + 1);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const perColumn = new Map<number, number>();
  const positions: Record<string, { x: number; y: number }> = {};
  for (const node of nodes) {
    if (node.position && Number.isFinite(node.position.x) && Number.isFinite(node.position.y)) {
      positions[node.id] = { x: node.position.x, y: node.position.y };
      continue;
    }
    const d = depth.get(node.id) ?? 0;
    const row = perColumn.get(d) ?? 0;
    perColumn.set(d, row + 1);
    positions[node.id] = { x: d * COLUMN_WIDTH, y: row * ROW_HEIGHT };
  }
  return positions;
}

/** A node as drawn: top-level nodes, fixed points as groups, their inner nodes inside. */
export interface DrawnNode {
  node: CircuitNode;
  /** Relative to the parent group when there is one. */
  position: { x: number; y: number };
  parentId?: string;
  /** Set for groups (fixed points). */
  size?: { width: number; height: number };
}

export interface DrawnEdge {
  id: string;
  source: string;
  target: string;
  label?: string;
}

export const NODE_WIDTH = 190;
const NODE_HEIGHT = 90;
const GROUP_PAD = 24;
const GROUP_HEADER = 70;
const GROUP_GAP = 60;

interface SubCircuit {
  nodes?: CircuitNode[];
  edges?: CircuitDocument['edges'];
}

function subcircuitOf(node: CircuitNode): SubCircuit | null {
  const sub = (node as CircuitNode & { subcircuit?: SubCircuit }).subcircuit;
  return sub && Array.isArray(sub.nodes) ? sub : null;
}

/**
 * Nodes and edges to draw. A fixed point becomes a group holding its subcircuit; an edge
 * into one of its ports ends at the inner import/delta0 of that name, an edge out of it
 * starts at the inner export. Top-level nodes right of a group move right (together)
 * as far as needed not to sit on it.
 */
export function drawnGraph(document: CircuitDocument): { nodes: DrawnNode[]; edges: DrawnEdge[] } {
  const top = document.nodes ?? [];
  const positions = layoutPositions(document);
  const groups = new Map<string, { sub: SubCircuit; inner: Record<string, { x: number; y: number }>; width: number; height: number }>();
  for (const node of top) {
    const sub = subcircuitOf(node);
    if (!sub) continue;
    const inner = layoutPositions({ format: document.format, version: document.version, nodes: sub.nodes ?? [], edges: sub.edges ?? [] });
    const xs = Object.values(inner).map((p) => p.x);
    const ys = Object.values(inner).map((p) => p.y);
    const minX = xs.length ? Math.min(...xs) : 0;
    const minY = ys.length ? Math.min(...ys) : 0;
    for (const id of Object.keys(inner)) {
      inner[id] = { x: inner[id]!.x - minX + GROUP_PAD, y: inner[id]!.y - minY + GROUP_HEADER };
    }
    const width = (xs.length ? Math.max(...xs) - minX : 0) + NODE_WIDTH + 2 * GROUP_PAD;
    const height = (ys.length ? Math.max(...ys) - minY : 0) + NODE_HEIGHT + GROUP_HEADER + GROUP_PAD;
    groups.set(node.id, { sub, inner, width, height });
  }
  // Make room for each group: shift what lies to its right just enough not to overlap.
  const shifted: Record<string, { x: number; y: number }> = { ...positions };
  for (const [id, group] of groups) {
    const origin = positions[id]!;
    const right = top.filter((other) => other.id !== id && positions[other.id]!.x > origin.x);
    if (!right.length) continue;
    const nearest = Math.min(...right.map((other) => positions[other.id]!.x));
    const extra = Math.max(0, origin.x + group.width + GROUP_GAP - nearest);
    for (const other of right) shifted[other.id] = { ...shifted[other.id]!, x: shifted[other.id]!.x + extra };
  }

  const nodes: DrawnNode[] = [];
  for (const node of top) {
    const group = groups.get(node.id);
    nodes.push({ node, position: shifted[node.id]!, ...(group ? { size: { width: group.width, height: group.height } } : {}) });
    if (group) {
      // xyflow wants a parent before its children.
      for (const inner of group.sub.nodes ?? []) nodes.push({ node: inner, position: group.inner[inner.id]!, parentId: node.id });
    }
  }

  const endpoint = (ref: { node: string; port: string }) => {
    const group = groups.get(ref.node);
    return group && (group.sub.nodes ?? []).some((n) => n.id === ref.port) ? ref.port : ref.node;
  };
  const edges: DrawnEdge[] = [];
  const add = (list: CircuitDocument['edges'] | undefined, scope: string) =>
    (list ?? []).forEach((e, i) => {
      const source = endpoint(e.from);
      const target = endpoint(e.to);
      const intoGroupPort = target !== e.to.node;
      edges.push({
        id: `${scope}:${e.from.node}.${e.from.port}->${e.to.node}.${e.to.port}#${i}`,
        source,
        target,
        ...(e.to.port !== 'in' && !intoGroupPort ? { label: e.to.port } : {}),
      });
    });
  add(document.edges, '');
  for (const [id, group] of groups) add(group.sub.edges, id);
  return { nodes, edges };
}
