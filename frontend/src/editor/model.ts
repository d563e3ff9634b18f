// The editor's graph model: pure functions over circuit documents (no React, no DOM).
// Structural edits (add, connect, delete, rename, paste, group into a fixed point) are
// document -> document functions; the canvas converts documents to React Flow nodes.

export interface PortRef {
  node: string;
  port: string;
}

export interface DocEdge {
  from: PortRef;
  to: PortRef;
}

export interface DocNode {
  id: string;
  kind: string;
  params?: Record<string, unknown>;
  position?: { x: number; y: number };
  label?: string;
  subcircuit?: { nodes: DocNode[]; edges: DocEdge[] };
  [extra: string]: unknown;
}

export interface Doc {
  format: string;
  version: number;
  nodes: DocNode[];
  edges: DocEdge[];
  [extra: string]: unknown;
}

export const FORMAT = 'dbspweb.circuit';

export function emptyDocument(): Doc {
  return { format: FORMAT, version: 1, nodes: [], edges: [] };
}

export const ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Boundary kinds inside a fixed point: the fixed point's input ports are the ids of its
 *  import/delta0 nodes, its output ports the ids of its export nodes. */
export const IMPORT_KINDS = new Set(['import', 'delta0']);
export const EXPORT_KIND = 'export';
export const FIXEDPOINT = 'fixedpoint';

export interface PortSpec {
  inputs: string[];
  outputs: string[];
}

/** Ports of each kind (from the operator catalog). */
export type PortCatalog = Record<string, PortSpec>;

export const BUILTIN_PORTS: PortCatalog = {
  import: { inputs: [], outputs: ['out'] },
  delta0: { inputs: [], outputs: ['out'] },
  export: { inputs: ['in'], outputs: [] },
  fixedpoint: { inputs: [], outputs: [] },
};

export function portsOf(node: DocNode, catalog: PortCatalog): PortSpec {
  if (node.kind === FIXEDPOINT) {
    const inner = node.subcircuit?.nodes ?? [];
    return {
      inputs: inner.filter((n) => IMPORT_KINDS.has(n.kind)).map((n) => n.id),
      outputs: inner.filter((n) => n.kind === EXPORT_KIND).map((n) => n.id),
    };
  }
  return catalog[node.kind] ?? BUILTIN_PORTS[node.kind] ?? { inputs: ['in'], outputs: ['out'] };
}

// ---------------------------------------------------------------- traversal

/** Every node of the document, nested ones included, with the id of its fixed point (or null). */
export function allNodes(doc: { nodes: DocNode[] }, parent: string | null = null): { node: DocNode; parent: string | null }[] {
  const out: { node: DocNode; parent: string | null }[] = [];
  for (const node of doc.nodes ?? []) {
    out.push({ node, parent });
    if (node.subcircuit) out.push(...allNodes(node.subcircuit, node.id));
  }
  return out;
}

/** Every edge with the id of the fixed point it lives in (or null for the top level). */
export function allEdges(doc: { nodes: DocNode[]; edges: DocEdge[] }, scope: string | null = null): { edge: DocEdge; scope: string | null }[] {
  const out = (doc.edges ?? []).map((edge) => ({ edge, scope }));
  for (const node of doc.nodes ?? []) {
    if (node.subcircuit) out.push(...allEdges(node.subcircuit, node.id));
  }
  return out;
}

export function allIds(doc: { nodes: DocNode[] }): Set<string> {
  return new Set(allNodes(doc).map((n) => n.node.id));
}

export function findNode(doc: { nodes: DocNode[] }, id: string): DocNode | undefined {
  return allNodes(doc).find((n) => n.node.id === id)?.node;
}

export function parentOf(doc: { nodes: DocNode[] }, id: string): string | null {
  return allNodes(doc).find((n) => n.node.id === id)?.parent ?? null;
}

/** A fresh id: `base`, else base2, base3, ... not in `taken`. */
export function freshId(base: string, taken: Set<string>): string {
  const clean = base.replace(/[^A-Za-z0-9_]/g, '_').replace(/^([^A-Za-z_])/, '_$1') || 'node';
  if (!taken.has(clean)) return clean;
  const stem = clean.replace(/\d+$/, '');
  for (let i = 2; ; i++) {
    const candidate = `${stem}${i}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Applies `fn` to the node list/edge list of the scope (null: top level; else a fixed point id). */
function mapScope(doc: Doc, scope: string | null, fn: (s: { nodes: DocNode[]; edges: DocEdge[] }) => { nodes: DocNode[]; edges: DocEdge[] }): Doc {
  if (scope === null) {
    const next = fn({ nodes: doc.nodes, edges: doc.edges });
    return { ...doc, nodes: next.nodes, edges: next.edges };
  }
  const walk = (nodes: DocNode[]): DocNode[] =>
    nodes.map((n) => {
      if (!n.subcircuit) return n;
      if (n.id === scope) return { ...n, subcircuit: fn(n.subcircuit) };
      return { ...n, subcircuit: { ...n.subcircuit, nodes: walk(n.subcircuit.nodes) } };
    });
  return { ...doc, nodes: walk(doc.nodes) };
}

function mapNodesDeep(nodes: DocNode[], fn: (n: DocNode) => DocNode): DocNode[] {
  return nodes.map((n) => {
    const m = fn(n);
    return m.subcircuit ? { ...m, subcircuit: { ...m.subcircuit, nodes: mapNodesDeep(m.subcircuit.nodes, fn) } } : m;
  });
}

function mapEdgesDeep(doc: Doc, fn: (e: DocEdge) => DocEdge | null): Doc {
  const walkEdges = (edges: DocEdge[]) => edges.map(fn).filter((e): e is DocEdge => e !== null);
  const walkNodes = (nodes: DocNode[]): DocNode[] =>
    nodes.map((n) =>
      n.subcircuit ? { ...n, subcircuit: { nodes: walkNodes(n.subcircuit.nodes), edges: walkEdges(n.subcircuit.edges) } } : n,
    );
  return { ...doc, nodes: walkNodes(doc.nodes), edges: walkEdges(doc.edges) };
}

// ---------------------------------------------------------------- edits

export function addNode(doc: Doc, node: DocNode, scope: string | null = null): Doc {
  return mapScope(doc, scope, (s) => ({ nodes: [...s.nodes, node], edges: s.edges }));
}

export function newNode(doc: Doc, kind: string, position: { x: number; y: number }, params: Record<string, unknown> = {}): DocNode {
  const node: DocNode = { id: freshId(kind, allIds(doc)), kind, params, position: { x: Math.round(position.x), y: Math.round(position.y) } };
  if (kind === FIXEDPOINT) {
    node.params = { max_iterations: 1000, ...params };
    node.subcircuit = { nodes: [], edges: [] };
  }
  return node;
}

export function updateNode(doc: Doc, id: string, patch: Partial<DocNode>): Doc {
  return { ...doc, nodes: mapNodesDeep(doc.nodes, (n) => (n.id === id ? { ...n, ...patch } : n)) };
}

export function setPositions(doc: Doc, positions: Record<string, { x: number; y: number }>): Doc {
  return {
    ...doc,
    nodes: mapNodesDeep(doc.nodes, (n) =>
    {
      const p = positions[n.id];
      return p ? { ...n, position: { x: Math.round(p.x), y: Math.round(p.y) } } : n;
    },
    ),
  };
}

export function addEdge(doc: Doc, edge: DocEdge): Doc {
  const scope = parentOf(doc, edge.from.node);
  return mapScope(doc, scope, (s) => ({ nodes: s.nodes, edges: [...s.edges, edge] }));
}

export const edgeKey = (e: DocEdge) => `${e.from.node}.${e.from.port}->${e.to.node}.${e.to.port}`;

/** Removes nodes (with their subcircuits) and every edge touching them; also removes edges by key. */
export function removeElements(doc: Doc, nodeIds: Iterable<string>, edgeKeys: Iterable<string> = []): Doc {
  const ids = new Set(nodeIds);
  const keys = new Set(edgeKeys);
  // Removing a boundary node removes the fixed point's port: edges to that port go too.
  const ports = new Set<string>();
  for (const { node, parent } of allNodes(doc)) {
    if (ids.has(node.id) && parent && (IMPORT_KINDS.has(node.kind) || node.kind === EXPORT_KIND)) ports.add(`${parent}.${node.id}`);
  }
  const prune = (nodes: DocNode[]): DocNode[] =>
    nodes
      .filter((n) => !ids.has(n.id))
      .map((n) => (n.subcircuit ? { ...n, subcircuit: { ...n.subcircuit, nodes: prune(n.subcircuit.nodes) } } : n));
  const pruned = { ...doc, nodes: prune(doc.nodes) };
  const remaining = allIds(pruned);
  return mapEdgesDeep(pruned, (e) =>
    remaining.has(e.from.node) &&
    remaining.has(e.to.node) &&
    !keys.has(edgeKey(e)) &&
    !ports.has(`${e.from.node}.${e.from.port}`) &&
    !ports.has(`${e.to.node}.${e.to.port}`)
      ? e
      : null,
  );
}

/** Renames a node everywhere (edges, and fixed-point ports named after boundary nodes). */
export function renameNode(doc: Doc, from: string, to: string): Doc {
  if (from === to) return doc;
  if (!ID_PATTERN.test(to)) throw new Error(`"${to}" is not a valid id (letters, digits, _; not starting with a digit)`);
  if (allIds(doc).has(to)) throw new Error(`id "${to}" is already used`);
  const parent = parentOf(doc, from);
  const renamed = { ...doc, nodes: mapNodesDeep(doc.nodes, (n) => (n.id === from ? { ...n, id: to } : n)) };
  return mapEdgesDeep(renamed, (e) => ({
    from: {
      node: e.from.node === from ? to : e.from.node,
      port: parent && e.from.node === parent && e.from.port === from ? to : e.from.port,
    },
    to: {
      node: e.to.node === from ? to : e.to.node,
      port: parent && e.to.node === parent && e.to.port === from ? to : e.to.port,
    },
  }));
}

// ---------------------------------------------------------------- connection rules

export interface SchemaColumn {
  name: string;
  type: string;
  nullable?: boolean;
}

export type Schemas = Record<string, SchemaColumn[]>;

/** Kinds whose two inputs must carry the same columns. */
const SAME_COLUMNS = new Set(['union', 'difference']);

/**
 * Why the engine would reject this connection, or null if it is fine. Checks: direction,
 * existing ports, self-loop, input port already connected, crossing a fixed-point boundary,
 * a cycle without z^-1, and (given inferred schemas) mismatched columns for union/difference.
 */
export function connectionProblem(doc: Doc, edge: DocEdge, catalog: PortCatalog, schemas: Schemas = {}): string | null {
  const source = findNode(doc, edge.from.node);
  const target = findNode(doc, edge.to.node);
  if (!source || !target) return 'unknown node';
  if (source.id === target.id) return `a node cannot feed itself (${source.id}); put a z⁻¹ (delay) in the loop`;
  const outs = portsOf(source, catalog).outputs;
  const ins = portsOf(target, catalog).inputs;
  if (!outs.includes(edge.from.port)) return `${source.id} has no output port "${edge.from.port}"`;
  if (!ins.includes(edge.to.port)) return `${target.id} has no input port "${edge.to.port}"`;
  const ps = parentOf(doc, source.id);
  const pt = parentOf(doc, target.id);
  if (ps !== pt) {
    return pt
      ? `${target.id} is inside fixed point ${pt}: connect to the fixed point's port (an import node) instead`
      : `${source.id} is inside fixed point ${ps}: leave through an export node`;
  }
  const taken = allEdges(doc).find(({ edge: e }) => e.to.node === target.id && e.to.port === edge.to.port);
  if (taken) return `input ${target.id}.${edge.to.port} is already connected (from ${taken.edge.from.node}); delete that wire first`;
  if (createsCycleWithoutDelay(doc, edge)) {
    return `this wire closes a cycle without a z⁻¹ (delay): ${edge.to.node} already feeds ${edge.from.node}`;
  }
  if (SAME_COLUMNS.has(target.kind)) {
    const other = ins.find((p) => p !== edge.to.port);
    const otherEdge = allEdges(doc).find(({ edge: e }) => e.to.node === target.id && e.to.port === other)?.edge;
    const mine = schemas[source.id];
    const theirs = otherEdge ? schemas[otherEdge.from.node] : undefined;
    if (mine && theirs) {
      const a = mine.map((c) => `${c.name} ${c.type}`).join(', ');
      const b = theirs.map((c) => `${c.name} ${c.type}`).join(', ');
      if (a !== b) return `${target.kind} needs the same columns on both inputs: (${a}) vs (${b})`;
    }
  }
  return null;
}

/** True if adding `edge` closes a cycle in its scope that passes through no delay node. */
export function createsCycleWithoutDelay(doc: Doc, edge: DocEdge): boolean {
  const kinds = new Map(allNodes(doc).map(({ node }) => [node.id, node.kind]));
  if (kinds.get(edge.from.node) === 'delay' || kinds.get(edge.to.node) === 'delay') return false;
  const next = new Map<string, string[]>();
  for (const { edge: e } of allEdges(doc)) {
    if (kinds.get(e.from.node) === 'delay') continue;
    next.set(e.from.node, [...(next.get(e.from.node) ?? []), e.to.node]);
  }
  // Is there a delay-free path from edge.to back to edge.from?
  const seen = new Set<string>();
  const stack = [edge.to.node];
  while (stack.length) {
    const id = stack.pop()!;
    if (id === edge.from.node) return true;
    if (seen.has(id) || kinds.get(id) === 'delay') continue;
    seen.add(id);
    stack.push(...(next.get(id) ?? []));
  }
  return false;
}

/** Nodes and edges on cycles that pass through no delay (Tarjan SCC over delay-free edges). */
export function cyclesWithoutDelay(doc: Doc): { nodes: Set<string>; edges: Set<string> } {
  const kinds = new Map(allNodes(doc).map(({ node }) => [node.id, node.kind]));
  const edges = allEdges(doc)
    .map(({ edge }) => edge)
    .filter((e) => kinds.get(e.from.node) !== 'delay' && kinds.get(e.to.node) !== 'delay');
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from.node, [...(next.get(e.from.node) ?? []), e.to.node]);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const comp = new Map<string, number>();
  let compCount = 0;
  const compSize: number[] = [];
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      let size = 0;
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        comp.set(w, compCount);
        size++;
        if (w === v) break;
      }
      compSize.push(size);
      compCount++;
    }
  };
  for (const id of kinds.keys()) if (!idx.has(id)) strong(id);
  const nodes = new Set<string>();
  const cycleEdges = new Set<string>();
  for (const e of edges) {
    const c = comp.get(e.from.node);
    if (c !== undefined && c === comp.get(e.to.node) && ((compSize[c] ?? 0) > 1 || e.from.node === e.to.node)) {
      nodes.add(e.from.node);
      nodes.add(e.to.node);
      cycleEdges.add(edgeKey(e));
    }
  }
  return { nodes, edges: cycleEdges };
}

// ---------------------------------------------------------------- validation display

export interface ValidationError {
  message: string;
  node?: string | null;
  port?: string | null;
  param?: string | null;
  position?: unknown;
  [extra: string]: unknown;
}

export interface ValidationMarks {
  /** Errors per node id (every error naming a node that exists). */
  byNode: Record<string, ValidationError[]>;
  /** Edge keys marked bad: the wire into a named port, or any wire of a delay-free cycle. */
  edges: Set<string>;
  /** Nodes on a cycle without z^-1. */
  cycleNodes: Set<string>;
  /** Errors naming no node (or a node not in the document): shown in the global list. */
  global: ValidationError[];
}

export function validationMarks(doc: Doc, errors: ValidationError[]): ValidationMarks {
  const ids = allIds(doc);
  const byNode: Record<string, ValidationError[]> = {};
  const global: ValidationError[] = [];
  const edges = new Set<string>();
  const everyEdge = allEdges(doc).map(({ edge }) => edge);
  for (const error of errors) {
    const node = error.node ?? null;
    if (node && ids.has(node)) {
      (byNode[node] ??= []).push(error);
      if (error.port) {
        for (const e of everyEdge) {
          if ((e.to.node === node && e.to.port === error.port) || (e.from.node === node && e.from.port === error.port)) {
            edges.add(edgeKey(e));
          }
        }
      }
    } else {
      global.push(error);
    }
  }
  const cycles = cyclesWithoutDelay(doc);
  for (const key of cycles.edges) edges.add(key);
  return { byNode, edges, cycleNodes: cycles.nodes, global };
}

/** Errors of one node's parameter (its param, or a nested path like "columns[1].expr"). */
export function paramErrors(errors: ValidationError[] | undefined, param: string): ValidationError[] {
  return (errors ?? []).filter((e) => typeof e.param === 'string' && (e.param === param || e.param.startsWith(`${param}[`) || e.param.startsWith(`${param}.`)));
}

// ---------------------------------------------------------------- clipboard

export const CLIPBOARD_KIND = 'dbspweb.circuit';

/** The selected nodes (nested selections are taken whole from their scope) and the edges among them, as a document. */
export function copySelection(doc: Doc, selected: Iterable<string>): Doc {
  const ids = new Set(selected);
  // Take the top-most scope that holds selected nodes.
  const pick = (scope: { nodes: DocNode[]; edges: DocEdge[] }): Doc | null => {
    const nodes = scope.nodes.filter((n) => ids.has(n.id));
    if (nodes.length) {
      const kept = new Set(nodes.map((n) => n.id));
      return {
        format: FORMAT,
        version: 1,
        nodes: structuredClone(nodes),
        edges: structuredClone(scope.edges.filter((e) => kept.has(e.from.node) && kept.has(e.to.node))),
      };
    }
    for (const n of scope.nodes) {
      if (n.subcircuit) {
        const found = pick(n.subcircuit);
        if (found) return found;
      }
    }
    return null;
  };
  return pick(doc) ?? emptyDocument();
}

/** Parses clipboard text as a circuit document (or null if it is not one). */
export function parseClipboard(text: string): Doc | null {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === 'object' && value.format === FORMAT && Array.isArray(value.nodes)) {
      return { ...value, edges: Array.isArray(value.edges) ? value.edges : [] } as Doc;
    }
  } catch {
    /* not JSON */
  }
  return null;
}

/**
 * Pastes a document fragment into `scope`: ids that clash get fresh ones (fixed-point
 * ports named after renamed boundary nodes follow), top-level positions shift by `offset`.
 * Returns the new document and the pasted top-level ids.
 */
export function pasteFragment(doc: Doc, fragment: Doc, offset = { x: 40, y: 40 }, scope: string | null = null): { doc: Doc; ids: string[] } {
  const taken = allIds(doc);
  const rename = new Map<string, string>();
  for (const { node } of allNodes(fragment)) {
    const id = freshId(taken.has(node.id) ? `${node.id}_copy` : node.id, taken);
    taken.add(id);
    rename.set(node.id, id);
  }
  const parents = new Map(allNodes(fragment).map(({ node, parent }) => [node.id, parent]));
  const mapId = (id: string) => rename.get(id) ?? id;
  const mapPort = (node: string, port: string) => {
    // A port of a fixed point is named after one of its boundary nodes.
    const portOwner = parents.get(port);
    return portOwner === node ? mapId(port) : port;
  };
  const remapEdges = (edges: DocEdge[]): DocEdge[] =>
    edges.map((e) => ({
      from: { node: mapId(e.from.node), port: mapPort(e.from.node, e.from.port) },
      to: { node: mapId(e.to.node), port: mapPort(e.to.node, e.to.port) },
    }));
  const remapNodes = (nodes: DocNode[], top: boolean): DocNode[] =>
    nodes.map((n) => {
      const m: DocNode = { ...structuredClone(n), id: mapId(n.id) };
      if (top && n.position) m.position = { x: n.position.x + offset.x, y: n.position.y + offset.y };
      if (n.subcircuit) m.subcircuit = { nodes: remapNodes(n.subcircuit.nodes, false), edges: remapEdges(n.subcircuit.edges) };
      return m;
    });
  const nodes = remapNodes(fragment.nodes, true);
  const edges = remapEdges(fragment.edges ?? []);
  const next = mapScope(doc, scope, (s) => ({ nodes: [...s.nodes, ...nodes], edges: [...s.edges, ...edges] }));
  return { doc: next, ids: nodes.map((n) => n.id) };
}

// ---------------------------------------------------------------- fixed-point grouping

/**
 * Moves the selected top-level nodes into a new fixed point. Wires entering the group get
 * an import node each (one per outer source port), wires leaving it an export node each
 * (one per inner source port); wires among the selected nodes move inside.
 */
export function groupIntoFixedpoint(doc: Doc, selected: Iterable<string>, catalog: PortCatalog): { doc: Doc; id: string } {
  const ids = new Set(selected);
  const members = doc.nodes.filter((n) => ids.has(n.id));
  if (members.length === 0) throw new Error('select one or more nodes to group');
  if (doc.nodes.length !== doc.nodes.filter((n) => !ids.has(n.id)).length + members.length) throw new Error('bad selection');
  for (const id of ids) {
    if (!doc.nodes.some((n) => n.id === id)) throw new Error(`${id} is inside a fixed point already; group top-level nodes`);
  }
  void catalog;
  const taken = allIds(doc);
  const fpId = freshId('fixedpoint', taken);
  taken.add(fpId);
  const xs = members.map((n) => n.position?.x ?? 0);
  const ys = members.map((n) => n.position?.y ?? 0);
  const origin = { x: Math.min(...xs), y: Math.min(...ys) };
  const PAD = { x: 200, y: 50 };
  const inner: DocNode[] = members.map((n) => ({
    ...n,
    position: { x: (n.position?.x ?? 0) - origin.x + PAD.x, y: (n.position?.y ?? 0) - origin.y + PAD.y },
  }));
  const innerEdges: DocEdge[] = [];
  const outerEdges: DocEdge[] = [];
  const imports = new Map<string, string>(); // "node.port" outside -> import id
  const exports = new Map<string, string>(); // "node.port" inside -> export id
  let importRow = 0;
  let exportRow = 0;
  const width = Math.max(...inner.map((n) => n.position!.x)) + 220;
  for (const e of doc.edges) {
    const fromIn = ids.has(e.from.node);
    const toIn = ids.has(e.to.node);
    if (fromIn && toIn) innerEdges.push(e);
    else if (!fromIn && toIn) {
      const key = `${e.from.node}.${e.from.port}`;
      let imp = imports.get(key);
      if (!imp) {
        imp = freshId(`${e.from.node}_in`, taken);
        taken.add(imp);
        imports.set(key, imp);
        inner.push({ id: imp, kind: 'import', params: {}, position: { x: 20, y: PAD.y + importRow++ * 90 } });
        outerEdges.push({ from: e.from, to: { node: fpId, port: imp } });
      }
      innerEdges.push({ from: { node: imp, port: 'out' }, to: e.to });
    } else if (fromIn && !toIn) {
      const key = `${e.from.node}.${e.from.port}`;
      let exp = exports.get(key);
      if (!exp) {
        exp = freshId(`${e.from.node}_out`, taken);
        taken.add(exp);
        exports.set(key, exp);
        inner.push({ id: exp, kind: 'export', params: {}, position: { x: width, y: PAD.y + exportRow++ * 90 } });
        innerEdges.push({ from: e.from, to: { node: exp, port: 'in' } });
      }
      outerEdges.push({ from: { node: fpId, port: exp }, to: e.to });
    } else outerEdges.push(e);
  }
  const fp: DocNode = {
    id: fpId,
    kind: FIXEDPOINT,
    params: { max_iterations: 1000 },
    position: { x: origin.x - PAD.x, y: origin.y - PAD.y },
    subcircuit: { nodes: inner, edges: innerEdges },
  };
  const firstIndex = doc.nodes.findIndex((n) => ids.has(n.id));
  const rest = doc.nodes.filter((n) => !ids.has(n.id));
  rest.splice(Math.min(firstIndex, rest.length), 0, fp);
  return { doc: { ...doc, nodes: rest, edges: outerEdges }, id: fpId };
}

/**
 * The inverse of grouping: a top-level fixed point's inner nodes move out (positions made
 * absolute); wires through its import/delta0/export nodes are joined up, the boundary
 * nodes go away.
 */
export function ungroupFixedpoint(doc: Doc, fpId: string): Doc {
  const fp = doc.nodes.find((n) => n.id === fpId);
  if (!fp || fp.kind !== FIXEDPOINT) throw new Error(`${fpId} is not a top-level fixed point`);
  const inner = fp.subcircuit ?? { nodes: [], edges: [] };
  const boundary = new Set(inner.nodes.filter((n) => IMPORT_KINDS.has(n.kind) || n.kind === EXPORT_KIND).map((n) => n.id));
  const origin = fp.position ?? { x: 0, y: 0 };
  const moved = inner.nodes
    .filter((n) => !boundary.has(n.id))
    .map((n) => ({ ...n, position: { x: origin.x + (n.position?.x ?? 0), y: origin.y + (n.position?.y ?? 0) } }));
  const edges: DocEdge[] = [];
  for (const e of doc.edges) {
    if (e.from.node === fpId || e.to.node === fpId) continue;
    edges.push(e);
  }
  for (const e of inner.edges) {
    const fromBoundary = boundary.has(e.from.node);
    const toBoundary = boundary.has(e.to.node);
    if (!fromBoundary && !toBoundary) edges.push(e);
    else if (fromBoundary && !toBoundary) {
      // import/delta0 -> inner target: connect the outer source of that port.
      const outer = doc.edges.find((o) => o.to.node === fpId && o.to.port === e.from.node);
      if (outer) edges.push({ from: outer.from, to: e.to });
    } else if (!fromBoundary && toBoundary) {
      // inner source -> export: connect it to every outer reader of that port.
      for (const o of doc.edges) if (o.from.node === fpId && o.from.port === e.to.node) edges.push({ from: e.from, to: o.to });
    }
  }
  const index = doc.nodes.findIndex((n) => n.id === fpId);
  const nodes = [...doc.nodes.slice(0, index), ...moved, ...doc.nodes.slice(index + 1)];
  return { ...doc, nodes, edges };
}

/** Moves an unwired top-level node into a fixed point's subcircuit at `position` (relative). */
export function moveIntoFixedpoint(doc: Doc, id: string, fpId: string, position: { x: number; y: number }): Doc {
  const node = doc.nodes.find((n) => n.id === id);
  const fp = doc.nodes.find((n) => n.id === fpId);
  if (!node || !fp || fp.kind !== FIXEDPOINT || node.kind === FIXEDPOINT) throw new Error(`cannot move ${id} into ${fpId}`);
  if (doc.edges.some((e) => e.from.node === id || e.to.node === id)) {
    throw new Error(`${id} has wires: delete them first, or select it with its neighbours and group them`);
  }
  const moved: DocNode = { ...node, position: { x: Math.round(position.x), y: Math.round(position.y) } };
  const nodes = doc.nodes
    .filter((n) => n.id !== id)
    .map((n) => (n.id === fpId ? { ...n, subcircuit: { nodes: [...(n.subcircuit?.nodes ?? []), moved], edges: n.subcircuit?.edges ?? [] } } : n));
  return { ...doc, nodes };
}

// ---------------------------------------------------------------- undo / redo

/** A bounded undo/redo history of immutable states. `record` with the same non-null
 *  `coalesce` key as the previous record replaces it (typing into one field is one step). */
export class History<T> {
  private past: T[] = [];
  private future: T[] = [];
  private lastKey: string | null = null;
  private lastAt = 0;

  constructor(
    private readonly limit = 200,
    private readonly coalesceMs = 1000,
  ) {}

  /** Records `before`, the state the edit started from. */
  record(before: T, coalesce: string | null = null, now = Date.now()): void {
    const merge = coalesce !== null && coalesce === this.lastKey && now - this.lastAt < this.coalesceMs;
    if (!merge) {
      this.past.push(before);
      if (this.past.length > this.limit) this.past.shift();
    }
    this.lastKey = coalesce;
    this.lastAt = now;
    this.future = [];
  }

  undo(current: T): T | null {
    const prev = this.past.pop();
    if (prev === undefined) return null;
    this.future.push(current);
    this.lastKey = null;
    return prev;
  }

  redo(current: T): T | null {
    const next = this.future.pop();
    if (next === undefined) return null;
    this.past.push(current);
    this.lastKey = null;
    return next;
  }

  get canUndo(): boolean {
    return this.past.length > 0;
  }

  get canRedo(): boolean {
    return this.future.length > 0;
  }

  clear(): void {
    this.past = [];
    this.future = [];
    this.lastKey = null;
  }
}
