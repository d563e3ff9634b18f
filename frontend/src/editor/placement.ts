// Where nodes go so that none sits on another: overlap checks for a loaded document,
// a free spot for a pasted fragment, and a drop point kept inside the visible canvas.

import { DEFAULT_SIZE } from './flow';
import type { Doc, DocNode } from './model';

type Sizes = Record<string, { width: number; height: number }>;
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Room kept between boxes that are said not to overlap. */
const GAP = 12;

function boxOf(node: DocNode, sizes: Sizes): Box | null {
  if (!node.position) return null;
  const size = sizes[node.id] ?? DEFAULT_SIZE;
  return { x: node.position.x, y: node.position.y, width: size.width, height: size.height };
}

export function intersects(a: Box, b: Box, gap = GAP): boolean {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
}

/** True if two nodes of one scope (the top level, or one fixed point's subcircuit) overlap. */
export function overlapping(doc: Pick<Doc, 'nodes'>, sizes: Sizes): boolean {
  const boxes = doc.nodes.map((n) => boxOf(n, sizes)).filter((b): b is Box => b !== null);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) if (intersects(boxes[i]!, boxes[j]!, 0)) return true;
  return doc.nodes.some((n) => (n.subcircuit ? overlapping(n.subcircuit, sizes) : false));
}

/** The bounding box of nodes (null if none has a position). */
export function bounds(nodes: readonly DocNode[], sizes: Sizes): Box | null {
  const boxes = nodes.map((n) => boxOf(n, sizes)).filter((b): b is Box => b !== null);
  if (!boxes.length) return null;
  const x = Math.min(...boxes.map((b) => b.x));
  const y = Math.min(...boxes.map((b) => b.y));
  return { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.max(...boxes.map((b) => b.y + b.height)) - y };
}

/** An offset for a pasted fragment so that it covers no node of `doc`: just below its
 * original place, else to its right, else further down, step by step. */
export function freeOffset(doc: Doc, fragment: Doc, sizes: Sizes): { x: number; y: number } {
  const box = bounds(fragment.nodes, sizes);
  if (!box) return { x: 40, y: 40 };
  const others = doc.nodes.map((n) => boxOf(n, sizes)).filter((b): b is Box => b !== null);
  const free = (dx: number, dy: number) => others.every((o) => !intersects({ ...box, x: box.x + dx, y: box.y + dy }, o));
  const down = box.height + 2 * GAP;
  const right = box.width + 2 * GAP;
  for (let step = 1; step <= 50; step++) {
    for (const [dx, dy] of [
      [0, down * step],
      [right * step, 0],
      [right * step, down * step],
    ] as const)
      if (free(dx, dy)) return { x: dx, y: dy };
  }
  return { x: 40, y: down * 51 };
}

/** The top-left corner for a node dropped at `at` (its head under the pointer), moved
 * inside `view` (the visible canvas, in flow coordinates) so the whole node shows. */
export function dropCorner(at: { x: number; y: number }, view: Box, size = DEFAULT_SIZE): { x: number; y: number } {
  const x = at.x - size.width / 2;
  const y = at.y - 20;
  const clamp = (v: number, lo: number, hi: number) => (hi < lo ? lo : Math.min(Math.max(v, lo), hi));
  return {
    x: clamp(x, view.x + GAP, view.x + view.width - size.width - GAP),
    y: clamp(y, view.y + GAP, view.y + view.height - size.height - GAP),
  };
}

/** The free spot nearest to `corner` for a new node of `size`: `corner` itself when the
 * node would cover none of `others`, else the closest place on a 20-unit grid inside
 * `view` where it covers none (a drop onto a node lands beside it, not on it). When
 * the visible canvas has no room left, `corner` as it is. */
export function freeSpot(corner: { x: number; y: number }, others: readonly Box[], view: Box, size = DEFAULT_SIZE): { x: number; y: number } {
  const free = (x: number, y: number) => others.every((o) => !intersects({ x, y, width: size.width, height: size.height }, o));
  if (free(corner.x, corner.y)) return corner;
  const step = 20;
  const lo = { x: view.x + GAP, y: view.y + GAP };
  const hi = { x: view.x + view.width - size.width - GAP, y: view.y + view.height - size.height - GAP };
  let best: { x: number; y: number } | null = null;
  let bestDistance = Infinity;
  for (let x = lo.x; x <= hi.x; x += step) {
    for (let y = lo.y; y <= hi.y; y += step) {
      const distance = (x - corner.x) ** 2 + (y - corner.y) ** 2;
      if (distance < bestDistance && free(x, y)) {
        best = { x, y };
        bestDistance = distance;
      }
    }
  }
  return best ?? corner;
}
