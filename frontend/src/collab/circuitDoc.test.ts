import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { Doc } from '../editor/model';
import { ownUndo, readDocument, writeDocument } from './circuitDoc';

const circuit: Doc = {
  format: 'dbspweb.circuit',
  version: 1,
  nodes: [
    { id: 'orders', kind: 'input', position: { x: 0, y: 0 }, params: { schema: [{ name: 'amount', type: 'bigint' }] } },
    { id: 'big', kind: 'filter', position: { x: 200, y: 0 }, params: { predicate: 'amount > 100', note: 'a' } },
  ],
  edges: [{ from: { node: 'orders', port: 'out' }, to: { node: 'big', port: 'in' } }],
  metadata: { source: { language: 'sql', text: 'select 1' } },
};

function seeded(): Y.Doc {
  const ydoc = new Y.Doc();
  ydoc.transact(() => writeDocument(ydoc, { format: 'dbspweb.circuit', version: 1, nodes: [], edges: [] }, circuit));
  return ydoc;
}

const copy = (from: Y.Doc) => {
  const to = new Y.Doc();
  Y.applyUpdate(to, Y.encodeStateAsUpdate(from));
  return to;
};

const withParam = (doc: Doc, id: string, key: string, value: unknown): Doc => ({
  ...doc,
  nodes: doc.nodes.map((n) => (n.id === id ? { ...n, params: { ...n.params, [key]: value } } : n)),
});

describe('the shared document adapter', () => {
  it('reads back the document it wrote', () => {
    expect(readDocument(seeded())).toEqual(circuit);
  });

  it('keeps both of two concurrent edits to different fields of one node', () => {
    const a = seeded();
    const b = copy(a);
    a.transact(() => writeDocument(a, readDocument(a), withParam(readDocument(a), 'big', 'predicate', 'amount > 7')));
    const before = readDocument(b);
    b.transact(() =>
      writeDocument(b, before, { ...withParam(before, 'big', 'note', 'b'), nodes: withParam(before, 'big', 'note', 'b').nodes.map((n) => (n.id === 'big' ? { ...n, position: { x: 5, y: 6 } } : n)) }),
    );
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    for (const doc of [a, b]) {
      const big = readDocument(doc).nodes.find((n) => n.id === 'big')!;
      expect(big.params).toEqual({ predicate: 'amount > 7', note: 'b' });
      expect(big.position).toEqual({ x: 5, y: 6 });
    }
  });

  it('merges concurrent typing in the source text', () => {
    const a = seeded();
    const b = copy(a);
    const text = (doc: Doc, t: string): Doc => ({ ...doc, metadata: { source: { language: 'sql', text: t } } });
    a.transact(() => writeDocument(a, readDocument(a), text(readDocument(a), 'select 1 from t')));
    b.transact(() => writeDocument(b, readDocument(b), text(readDocument(b), '-- mine\nselect 1')));
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    const merged = (readDocument(a).metadata as { source: { text: string } }).source.text;
    expect(merged).toBe('-- mine\nselect 1 from t');
    expect(readDocument(b)).toEqual(readDocument(a));
  });

  it('undoes only its own edits', () => {
    const a = seeded();
    const b = copy(a);
    const mine = {};
    const undo = ownUndo(a, mine);
    a.transact(() => writeDocument(a, readDocument(a), withParam(readDocument(a), 'big', 'predicate', 'amount > 1')), mine);
    b.transact(() => writeDocument(b, readDocument(b), withParam(readDocument(b), 'big', 'note', 'theirs')));
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    undo.undo();
    expect(readDocument(a).nodes.find((n) => n.id === 'big')!.params).toEqual({ predicate: 'amount > 100', note: 'theirs' });
  });

  it('drops a wire drawn to a node deleted at the same moment, alike on both copies', () => {
    const a = seeded();
    const b = copy(a);
    const before = readDocument(a);
    // A adds "big2" and wires big -> big2; B deletes "big" (and the wire it knows of).
    const added: Doc = {
      ...before,
      nodes: [...before.nodes, { id: 'big2', kind: 'filter', position: { x: 400, y: 0 }, params: { predicate: 'amount > 5' } }],
      edges: [...before.edges, { from: { node: 'big', port: 'out' }, to: { node: 'big2', port: 'in' } }],
    };
    a.transact(() => writeDocument(a, before, added));
    const deleted: Doc = { ...before, nodes: before.nodes.filter((n) => n.id !== 'big'), edges: [] };
    b.transact(() => writeDocument(b, before, deleted));
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b));
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    for (const merged of [readDocument(a), readDocument(b)]) {
      expect(merged.nodes.map((n) => n.id)).toEqual(['orders', 'big2']);
      expect(merged.edges).toEqual([]); // no wire from the deleted "big"
    }
  });
});
