import { describe, expect, it } from 'vitest';
import { docToFlow, edgeFromId } from './flow';
import {
  addEdge,
  addNode,
  allEdges,
  allIds,
  connectionProblem,
  copySelection,
  cyclesWithoutDelay,
  edgeKey,
  findNode,
  groupIntoFixedpoint,
  ungroupFixedpoint,
  moveIntoFixedpoint,
  History,
  newNode,
  paramErrors,
  parseClipboard,
  pasteFragment,
  portsOf,
  removeElements,
  renameNode,
  validationMarks,
  type Doc,
  type PortCatalog,
} from './model';

const ports: PortCatalog = {
  input: { inputs: [], outputs: ['out'] },
  output: { inputs: ['in'], outputs: [] },
  filter: { inputs: ['in'], outputs: ['out'] },
  map: { inputs: ['in'], outputs: ['out'] },
  aggregate: { inputs: ['in'], outputs: ['out'] },
  join: { inputs: ['left', 'right'], outputs: ['out'] },
  union: { inputs: ['a', 'b'], outputs: ['out'] },
  distinct: { inputs: ['in'], outputs: ['out'] },
  delay: { inputs: ['in'], outputs: ['out'] },
};

const e = (from: string, fp: string, to: string, tp: string) => ({ from: { node: from, port: fp }, to: { node: to, port: tp } });

function transactions(): Doc {
  return {
    format: 'dbspweb.circuit',
    version: 1,
    nodes: [
      { id: 'transactions', kind: 'input', params: { schema: [{ name: 'amount', type: 'bigint' }] }, position: { x: 0, y: 0 } },
      { id: 'credits', kind: 'aggregate', params: {}, position: { x: 200, y: 0 } },
      { id: 'debits', kind: 'aggregate', params: {}, position: { x: 200, y: 100 } },
      { id: 'by_account', kind: 'join', params: {}, position: { x: 400, y: 50 } },
      { id: 'balance', kind: 'output', params: {}, position: { x: 600, y: 50 } },
    ],
    edges: [
      e('transactions', 'out', 'credits', 'in'),
      e('transactions', 'out', 'debits', 'in'),
      e('credits', 'out', 'by_account', 'left'),
      e('debits', 'out', 'by_account', 'right'),
      e('by_account', 'out', 'balance', 'in'),
    ],
  };
}

/** edges: ids reach -> closure (a fixed point with an import, a delay loop and an export). */
function closure(): Doc {
  return {
    format: 'dbspweb.circuit',
    version: 1,
    nodes: [
      { id: 'edges', kind: 'input', params: {}, position: { x: 0, y: 0 } },
      {
        id: 'closure',
        kind: 'fixedpoint',
        params: { max_iterations: 1000 },
        position: { x: 200, y: 0 },
        subcircuit: {
          nodes: [
            { id: 'e_in', kind: 'import', params: {}, position: { x: 20, y: 40 } },
            { id: 'step', kind: 'union', params: {}, position: { x: 200, y: 40 } },
            { id: 'again', kind: 'delay', params: {}, position: { x: 200, y: 160 } },
            { id: 'paths', kind: 'export', params: {}, position: { x: 400, y: 40 } },
          ],
          edges: [e('e_in', 'out', 'step', 'a'), e('again', 'out', 'step', 'b'), e('step', 'out', 'again', 'in'), e('step', 'out', 'paths', 'in')],
        },
      },
      { id: 'reach', kind: 'output', params: {}, position: { x: 800, y: 0 } },
    ],
    edges: [e('edges', 'out', 'closure', 'e_in'), e('closure', 'paths', 'reach', 'in')],
  };
}

describe('document -> React Flow', () => {
  it('makes a node per document node with handles for its ports and an edge per wire', () => {
    const { nodes, edges } = docToFlow(transactions(), { catalog: ports });
    expect(nodes.map((n) => n.id)).toEqual(['transactions', 'credits', 'debits', 'by_account', 'balance']);
    const join = nodes.find((n) => n.id === 'by_account')!;
    expect(join.data.inputs).toEqual(['left', 'right']);
    expect(join.position).toEqual({ x: 400, y: 50 });
    expect(edges).toHaveLength(5);
    expect(edges[2]).toMatchObject({ source: 'credits', sourceHandle: 'out', target: 'by_account', targetHandle: 'left' });
    // Edge ids round-trip to the document's edge.
    expect(edgeFromId(edges[2]!.id)).toEqual(e('credits', 'out', 'by_account', 'left'));
  });

  it('renders a fixed point as a group whose children are its subcircuit and whose ports are its boundary nodes', () => {
    const { nodes, edges } = docToFlow(closure(), { catalog: ports });
    const fp = nodes.find((n) => n.id === 'closure')!;
    expect(fp.type).toBe('fixedpoint');
    expect(fp.data.inputs).toEqual(['e_in']);
    expect(fp.data.outputs).toEqual(['paths']);
    const step = nodes.find((n) => n.id === 'step')!;
    expect(step.parentId).toBe('closure');
    expect(step.position).toEqual({ x: 200, y: 40 }); // relative to the group
    // Parents precede their children (React Flow requires it).
    expect(nodes.findIndex((n) => n.id === 'closure')).toBeLessThan(nodes.findIndex((n) => n.id === 'step'));
    // The group is big enough for its children.
    expect(Number(fp.width)).toBeGreaterThanOrEqual(400 + 180);
    expect(edges.find((x) => x.source === 'again')!.data?.scope).toBe('closure');
    expect(edges.find((x) => x.target === 'closure')!.data?.scope).toBeNull();
  });

  it('gives handles to ports that wires use even when the catalog does not know the kind', () => {
    const doc = transactions();
    doc.nodes.push({ id: 'w', kind: 'tumble_window', params: {} });
    doc.edges.push(e('balance', 'x', 'w', 'events'));
    const { nodes } = docToFlow(doc, { catalog: ports });
    expect(nodes.find((n) => n.id === 'w')!.data.inputs).toContain('events');
  });
});

describe('edits', () => {
  it('adds nodes with fresh ids and removes nodes with their wires', () => {
    let doc = transactions();
    const a = newNode(doc, 'filter', { x: 10.4, y: 20.6 });
    expect(a).toMatchObject({ id: 'filter', position: { x: 10, y: 21 } });
    doc = addNode(doc, a);
    expect(newNode(doc, 'filter', { x: 0, y: 0 }).id).toBe('filter2');
    doc = removeElements(doc, ['credits']);
    expect(findNode(doc, 'credits')).toBeUndefined();
    expect(doc.edges.some((x) => x.from.node === 'credits' || x.to.node === 'credits')).toBe(false);
    doc = removeElements(doc, [], [edgeKey(e('by_account', 'out', 'balance', 'in'))]);
    expect(doc.edges).toHaveLength(2);
  });

  it('renames a node in its wires, and a boundary node in its fixed point’s port', () => {
    const doc = renameNode(closure(), 'e_in', 'links');
    expect(doc.edges[0]).toEqual(e('edges', 'out', 'closure', 'links'));
    expect(allEdges(doc).some(({ edge }) => edge.from.node === 'links')).toBe(true);
    expect(() => renameNode(doc, 'reach', 'edges')).toThrow(/already used/);
    expect(() => renameNode(doc, 'reach', '9bad')).toThrow(/not a valid id/);
  });

  it('removing a boundary node removes the fixed point’s port wires', () => {
    const doc = removeElements(closure(), ['paths']);
    expect(doc.edges).toEqual([e('edges', 'out', 'closure', 'e_in')]);
  });
});

describe('connection rules', () => {
  const doc = () => {
    const d = transactions();
    d.nodes.push({ id: 'f', kind: 'filter', params: {} }, { id: 'u', kind: 'union', params: {} }, { id: 'z', kind: 'delay', params: {} });
    return d;
  };

  it('accepts a free input', () => {
    expect(connectionProblem(doc(), e('balance', 'out', 'f', 'in'), { ...ports, output: { inputs: ['in'], outputs: ['out'] } })).toBeNull();
    expect(connectionProblem(doc(), e('transactions', 'out', 'f', 'in'), ports)).toBeNull();
  });

  it('refuses self-loops, taken inputs, unknown ports and delay-free cycles, saying why', () => {
    expect(connectionProblem(doc(), e('f', 'out', 'f', 'in'), ports)).toMatch(/cannot feed itself/);
    expect(connectionProblem(doc(), e('debits', 'out', 'by_account', 'left'), ports)).toMatch(/already connected \(from credits\)/);
    expect(connectionProblem(doc(), e('balance', 'out', 'f', 'in'), ports)).toMatch(/no output port "out"/);
    expect(connectionProblem(doc(), e('by_account', 'out', 'credits', 'in'), ports)).toMatch(/already connected/);
    let d = doc();
    d = addEdge(d, e('transactions', 'out', 'u', 'a'));
    d = addEdge(d, e('u', 'out', 'f', 'in'));
    expect(connectionProblem(d, e('f', 'out', 'u', 'b'), ports)).toMatch(/cycle without a z⁻¹/);
    // Through a delay, the loop is fine.
    d = addEdge(d, e('f', 'out', 'z', 'in'));
    expect(connectionProblem(d, e('z', 'out', 'u', 'b'), ports)).toBeNull();
  });

  it('refuses a union of inputs with different columns (from the inferred schemas)', () => {
    let d = doc();
    d = addEdge(d, e('transactions', 'out', 'u', 'a'));
    const schemas = { transactions: [{ name: 'amount', type: 'bigint' }], credits: [{ name: 'to_acct', type: 'bigint' }] };
    expect(connectionProblem(d, e('credits', 'out', 'u', 'b'), ports, schemas)).toMatch(/same columns.*to_acct bigint.*amount bigint/);
    expect(connectionProblem(d, e('transactions', 'out', 'u', 'b'), ports, schemas)).toBeNull();
  });

  it('refuses wires across a fixed point’s boundary', () => {
    expect(connectionProblem(closure(), e('edges', 'out', 'step', 'b'), ports)).toMatch(/inside fixed point closure/);
    expect(portsOf(findNode(closure(), 'closure')!, ports)).toEqual({ inputs: ['e_in'], outputs: ['paths'] });
  });
});

describe('validation display', () => {
  it('puts every error on the node it names, marks the wire into a named port, and keeps the rest global', () => {
    const marks = validationMarks(transactions(), [
      { message: "left_keys: unknown column 'nope'", node: 'by_account', port: 'left', param: 'left_keys' },
      { message: 'bad predicate', node: 'credits', param: 'aggregates[0].expr' },
      { message: 'circuit has no output', node: null },
      { message: 'ghost', node: 'gone' },
    ]);
    expect(marks.byNode.by_account).toHaveLength(1);
    expect(marks.byNode.credits).toHaveLength(1);
    expect(marks.edges).toEqual(new Set([edgeKey(e('credits', 'out', 'by_account', 'left'))]));
    expect(marks.global.map((x) => x.message)).toEqual(['circuit has no output', 'ghost']);
    expect(paramErrors(marks.byNode.credits, 'aggregates')).toHaveLength(1);
    expect(paramErrors(marks.byNode.credits, 'group_by')).toHaveLength(0);
  });

  it('highlights cycles without a delay, and not those through one', () => {
    const d = transactions();
    d.edges.push(e('by_account', 'out', 'credits', 'in'));
    const cycles = cyclesWithoutDelay(d);
    expect(cycles.nodes).toEqual(new Set(['credits', 'by_account']));
    expect(validationMarks(d, []).cycleNodes.has('credits')).toBe(true);
    expect(cyclesWithoutDelay(closure()).nodes.size).toBe(0);
  });
});

describe('undo/redo history', () => {
  it('undoes and redoes, and a new edit drops the redo branch', () => {
    const h = new History<number>();
    h.record(0);
    h.record(1);
    expect(h.undo(2)).toBe(1);
    expect(h.undo(1)).toBe(0);
    expect(h.undo(0)).toBeNull();
    expect(h.redo(0)).toBe(1);
    h.record(1);
    expect(h.canRedo).toBe(false);
  });

  it('coalesces quick edits of one field into one step', () => {
    const h = new History<string>(200, 1000);
    h.record('', 'expr', 0);
    h.record('a', 'expr', 100);
    h.record('am', 'expr', 200);
    h.record('amo', 'other', 300);
    expect(h.undo('amount')).toBe('amo');
    expect(h.undo('amo')).toBe('');
    h.record('x', 'expr', 5000);
    h.record('xy', 'expr', 7000); // too late to merge
    expect(h.undo('xyz')).toBe('xy');
  });

  it('is bounded', () => {
    const h = new History<number>(3);
    for (let i = 0; i < 10; i++) h.record(i);
    expect([h.undo(10), h.undo(9), h.undo(8), h.undo(7)]).toEqual([9, 8, 7, null]);
  });
});

describe('clipboard', () => {
  it('copies selected nodes with the wires among them, as a circuit document', () => {
    const fragment = copySelection(transactions(), ['credits', 'by_account']);
    expect(fragment.format).toBe('dbspweb.circuit');
    expect(fragment.nodes.map((n) => n.id)).toEqual(['credits', 'by_account']);
    expect(fragment.edges).toEqual([e('credits', 'out', 'by_account', 'left')]);
    expect(parseClipboard(JSON.stringify(fragment))).toEqual(fragment);
    expect(parseClipboard('hello')).toBeNull();
    expect(parseClipboard('{"nodes": []}')).toBeNull();
  });

  it('pastes with fresh ids for clashes, keeps wires inside the paste, and shifts positions', () => {
    const doc = transactions();
    const fragment = copySelection(doc, ['credits', 'by_account']);
    const { doc: pasted, ids } = pasteFragment(doc, fragment, { x: 40, y: 40 });
    expect(ids).toEqual(['credits_copy', 'by_account_copy']);
    expect(pasted.edges).toContainEqual(e('credits_copy', 'out', 'by_account_copy', 'left'));
    expect(findNode(pasted, 'credits_copy')!.position).toEqual({ x: 240, y: 40 });
    // Pasting twice still gives unique ids.
    const again = pasteFragment(pasted, fragment).ids;
    expect(again).toEqual(['credits_copy2', 'by_account_copy2']);
    // Into another circuit without clashes, ids stay.
    const other: Doc = { format: 'dbspweb.circuit', version: 1, nodes: [], edges: [] };
    expect(pasteFragment(other, fragment).ids).toEqual(['credits', 'by_account']);
  });

  it('remaps a pasted fixed point’s inner ids and the port names that follow them', () => {
    const doc = closure();
    const fragment = copySelection(doc, ['closure', 'reach']);
    const { doc: pasted } = pasteFragment(doc, fragment);
    const ids = allIds(pasted);
    expect(ids.has('closure_copy') && ids.has('e_in_copy') && ids.has('paths_copy')).toBe(true);
    expect(pasted.edges).toContainEqual(e('closure_copy', 'paths_copy', 'reach_copy', 'in'));
    expect(portsOf(findNode(pasted, 'closure_copy')!, ports)).toEqual({ inputs: ['e_in_copy'], outputs: ['paths_copy'] });
    expect(allIds(pasted).size).toBe(2 * allIds(doc).size - 1); // "edges" was not copied
  });
});

describe('grouping into a fixed point', () => {
  it('moves the selection inside, with an import per entering wire and an export per leaving wire', () => {
    const { doc, id } = groupIntoFixedpoint(transactions(), ['credits', 'debits', 'by_account'], ports);
    expect(id).toBe('fixedpoint');
    const fp = findNode(doc, id)!;
    expect(fp.kind).toBe('fixedpoint');
    expect(fp.subcircuit!.nodes.map((n) => n.kind).sort()).toEqual(['aggregate', 'aggregate', 'export', 'import', 'join']);
    // One import for transactions.out (feeding two nodes), one export for by_account.out.
    expect(doc.edges).toEqual([e('transactions', 'out', id, 'transactions_in'), e(id, 'by_account_out', 'balance', 'in')]);
    expect(fp.subcircuit!.edges).toContainEqual(e('transactions_in', 'out', 'credits', 'in'));
    expect(fp.subcircuit!.edges).toContainEqual(e('transactions_in', 'out', 'debits', 'in'));
    expect(fp.subcircuit!.edges).toContainEqual(e('by_account', 'out', 'by_account_out', 'in'));
    expect(portsOf(fp, ports)).toEqual({ inputs: ['transactions_in'], outputs: ['by_account_out'] });
    // Top level keeps the others; every id is still unique.
    expect(doc.nodes.map((n) => n.id)).toEqual(['transactions', 'fixedpoint', 'balance']);
    // Children positions are relative to the group, inside it.
    expect(fp.subcircuit!.nodes.every((n) => n.position!.x >= 0 && n.position!.y >= 0)).toBe(true);
  });

  it('ungroups back to the original wiring, positions made absolute', () => {
    const original = transactions();
    const { doc, id } = groupIntoFixedpoint(original, ['credits', 'debits', 'by_account'], ports);
    const back = ungroupFixedpoint(doc, id);
    expect(new Set(back.nodes.map((n) => n.id))).toEqual(new Set(original.nodes.map((n) => n.id)));
    expect(new Set(back.edges.map(edgeKey))).toEqual(new Set(original.edges.map(edgeKey)));
    expect(findNode(back, 'credits')!.position).toEqual(findNode(original, 'credits')!.position);
    expect(() => ungroupFixedpoint(back, 'credits')).toThrow(/not a top-level fixed point/);
  });

  it('moves an unwired node into a fixed point, and refuses a wired one', () => {
    let doc = closure();
    doc = addNode(doc, { id: 'seed', kind: 'delta0', params: {}, position: { x: 300, y: 300 } });
    const moved = moveIntoFixedpoint(doc, 'seed', 'closure', { x: 40.4, y: 250 });
    expect(moved.nodes.map((n) => n.id)).toEqual(['edges', 'closure', 'reach']);
    expect(findNode(moved, 'seed')!.position).toEqual({ x: 40, y: 250 });
    expect(portsOf(findNode(moved, 'closure')!, ports).inputs).toEqual(['e_in', 'seed']);
    expect(() => moveIntoFixedpoint(moved, 'reach', 'closure', { x: 0, y: 0 })).toThrow(/has wires/);
  });

  it('refuses an empty selection', () => {
    expect(() => groupIntoFixedpoint(transactions(), [], ports)).toThrow(/select/);
  });
});

describe('document -> React Flow (selection and marks)', () => {
  it('carries selection, in-flight drag positions and bad-edge marks', () => {
    const doc = transactions();
    const bad = new Set([edgeKey(e('credits', 'out', 'by_account', 'left'))]);
    const { nodes, edges } = docToFlow(doc, {
      catalog: ports,
      selectedNodes: new Set(['debits']),
      selectedEdges: new Set([edgeKey(e('by_account', 'out', 'balance', 'in'))]),
      positions: { credits: { x: 5, y: 6 } },
      badEdges: bad,
    });
    expect(nodes.find((n) => n.id === 'debits')!.selected).toBe(true);
    expect(nodes.find((n) => n.id === 'credits')!.selected).toBe(false);
    expect(nodes.find((n) => n.id === 'credits')!.position).toEqual({ x: 5, y: 6 });
    expect(edges.find((x) => x.target === 'balance')!.selected).toBe(true);
    expect(edges.filter((x) => x.className === 'edge-bad').map((x) => x.id)).toEqual([...bad]);
  });
});
