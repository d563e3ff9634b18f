// The one adapter between the editor's circuit documents and the shared Y.Doc
// (docs/collaboration.md). The editor keeps editing plain documents with the pure
// functions of editor/model.ts; `writeDocument` turns each edit into the smallest Y
// transaction (a node's field, one parameter, an edge, a span of text), so that two
// people changing different fields of one node both keep their change; `readDocument`
// turns the Y.Doc back into a document after every transaction, local or remote.
// The layout is shared with the server (circuits/collab/layout.py):
//   nodes: Y.Map id -> Y.Map {kind, label, position, params: Y.Map, subcircuit, order, ...}
//   edges: Y.Map key -> {edge, order}
//   source: Y.Text (metadata.source.text);  meta: Y.Map {title, format, version, source_language, rest}

import * as Y from 'yjs';
import { edgeKey, FORMAT, type Doc, type DocEdge, type DocNode } from '../editor/model';

type Json = unknown;

/** Deep equality of JSON values (key order does not matter). */
export function same(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as Json[];
    return a.length === bb.length && a.every((x, i) => same(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, Json>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, Json>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same((a as Record<string, Json>)[k], (b as Record<string, Json>)[k]));
}

export const parts = (ydoc: Y.Doc) => ({
  nodes: ydoc.getMap<Y.Map<Json>>('nodes'),
  edges: ydoc.getMap<{ edge: DocEdge; order: number }>('edges'),
  source: ydoc.getText('source'),
  meta: ydoc.getMap<Json>('meta'),
});

/** Undo and redo of one client's own edits: only transactions made with `origin` are
 *  tracked, so someone else's change made in between stays when you undo. */
export function ownUndo(ydoc: Y.Doc, origin: object): Y.UndoManager {
  const { nodes, edges, source, meta } = parts(ydoc);
  return new Y.UndoManager([nodes, edges, source, meta], { trackedOrigins: new Set([origin]), captureTimeout: 500 });
}

export const titleOf = (ydoc: Y.Doc): string | null => (parts(ydoc).meta.get('title') as string | undefined) ?? null;

/** The circuit document the shared document holds. */
export function readDocument(ydoc: Y.Doc): Doc {
  const { nodes, edges, source, meta } = parts(ydoc);
  const listed: (DocNode & { order?: number })[] = [];
  nodes.forEach((fields, id) => listed.push({ id, ...fields.toJSON() } as DocNode & { order?: number }));
  listed.sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.id.localeCompare(b.id));
  // A wire drawn to a node that someone deleted at the same moment goes with the node: the
  // two edits touch different entries (the wire's, the node's), so both stand in the CRDT.
  const present = new Set(listed.map((n) => n.id));
  const edgeList = Array.from(edges.values())
    .filter((e) => present.has(e.edge.from.node) && present.has(e.edge.to.node))
    .sort((a, b) => a.order - b.order || edgeKey(a.edge).localeCompare(edgeKey(b.edge)));
  const doc: Doc = {
    format: (meta.get('format') as string) ?? FORMAT,
    version: (meta.get('version') as number) ?? 1,
    nodes: listed.map(({ order: _order, ...node }) => node as DocNode),
    edges: edgeList.map((e) => e.edge),
    ...((meta.get('rest') as Record<string, Json>) ?? {}),
  };
  const language = meta.get('source_language') as string | undefined;
  if (language) doc.metadata = { ...((doc.metadata as object) ?? {}), source: { language, text: source.toString() } };
  return doc;
}

function nodeFields(node: DocNode, order: number): Y.Map<Json> {
  const fields = new Y.Map<Json>();
  fields.set('order', order);
  for (const [field, value] of Object.entries(node)) {
    if (field === 'id' || value === undefined) continue;
    if (field === 'params' && value && typeof value === 'object') {
      const params = new Y.Map<Json>();
      for (const [k, v] of Object.entries(value)) if (v !== undefined) params.set(k, v);
      fields.set('params', params);
    } else fields.set(field, value);
  }
  return fields;
}

function writeParams(fields: Y.Map<Json>, before: Record<string, Json> | undefined, after: Record<string, Json> | undefined) {
  let params = fields.get('params');
  if (!(params instanceof Y.Map)) {
    if (after === undefined) return;
    params = new Y.Map<Json>();
    fields.set('params', params);
  }
  const map = params as Y.Map<Json>;
  if (after === undefined) return void fields.delete('params');
  for (const key of Object.keys(before ?? {})) if (!(key in after) || after[key] === undefined) map.delete(key);
  for (const [key, value] of Object.entries(after)) {
    if (value !== undefined && !same(before?.[key], value)) map.set(key, value);
  }
}

/** The text `before` became `after`, as one delete and one insert between their common ends. */
function writeText(text: Y.Text, before: string, after: string) {
  if (before === after) return;
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  if (before.length - start - end > 0) text.delete(start, before.length - start - end);
  if (after.length - start - end > 0) text.insert(start, after.slice(start, after.length - end));
}

const sourceOf = (doc: Doc) => (doc.metadata as { source?: { language: string; text: string } } | undefined)?.source;
const restOf = (doc: Doc) => {
  const { format: _f, version: _v, nodes: _n, edges: _e, ...rest } = doc;
  if (rest.metadata && typeof rest.metadata === 'object') {
    const { source: _s, ...metadata } = rest.metadata as Record<string, Json>;
    if (Object.keys(metadata).length) rest.metadata = metadata;
    else delete rest.metadata;
  }
  return rest;
};

/** Writes the change from `before` (what the Y.Doc held) to `after` into it, field by field.
 *  Call inside `ydoc.transact(..., origin)`. */
export function writeDocument(ydoc: Y.Doc, before: Doc, after: Doc): void {
  const { nodes, edges, source, meta } = parts(ydoc);
  const old = new Map(before.nodes.map((n) => [n.id, n]));
  const next = new Set(after.nodes.map((n) => n.id));
  for (const id of old.keys()) if (!next.has(id)) nodes.delete(id);
  let order = Math.max(-1, ...Array.from(nodes.values()).map((f) => Number(f.get('order') ?? 0))) + 1;
  for (const node of after.nodes) {
    const was = old.get(node.id);
    const fields = nodes.get(node.id);
    if (!was || !fields) {
      nodes.set(node.id, nodeFields(node, order++));
      continue;
    }
    for (const key of new Set([...Object.keys(was), ...Object.keys(node)])) {
      if (key === 'id') continue;
      if (key === 'params') writeParams(fields, was.params, node.params);
      else if (node[key] === undefined) {
        if (was[key] !== undefined) fields.delete(key);
      } else if (!same(was[key], node[key])) fields.set(key, node[key]);
    }
  }
  const oldEdges = new Set(before.edges.map(edgeKey));
  const newEdges = new Set(after.edges.map(edgeKey));
  for (const key of oldEdges) if (!newEdges.has(key)) edges.delete(key);
  let edgeOrder = Math.max(-1, ...Array.from(edges.values()).map((e) => e.order)) + 1;
  for (const edge of after.edges) if (!oldEdges.has(edgeKey(edge))) edges.set(edgeKey(edge), { edge, order: edgeOrder++ });

  const [was, now] = [sourceOf(before), sourceOf(after)];
  if (now?.language !== was?.language) {
    if (now) meta.set('source_language', now.language);
    else meta.delete('source_language');
  }
  writeText(source, was?.text ?? '', now?.text ?? '');
  if (after.format !== before.format) meta.set('format', after.format);
  if (after.version !== before.version) meta.set('version', after.version);
  const rest = restOf(after);
  if (!same(restOf(before), rest)) meta.set('rest', rest);
}
