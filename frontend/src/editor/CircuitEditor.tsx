// The circuit editor: palette, canvas, and the selected node's side panel. Edits go
// through the document history (undo/redo); the engine's validation runs debounced on
// every change and marks nodes, edges and form fields.

import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type ReactNode } from 'react';
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type EdgeChange,
  type FinalConnectionState,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { PresenceLayer, ViewSharing } from '../collab/Presence';
import type { Peer, View } from '../collab/useSharedDocument';
import type { Validation } from '../api/editor';
import { messagesOf } from '../components/ErrorText';
import { docToFlow, type FlowNode } from './flow';
import { autoLayout, needsLayout } from './layout';
import { dropCorner, freeOffset, freeSpot, overlapping } from './placement';
import {
  addEdge,
  addNode,
  allEdges,
  allNodes,
  connectionProblem,
  copySelection,
  edgeKey,
  findNode,
  FIXEDPOINT,
  groupIntoFixedpoint,
  ungroupFixedpoint,
  moveIntoFixedpoint,
  newNode,
  parseClipboard,
  pasteFragment,
  removeElements,
  setPositions,
  validationMarks,
  type DocEdge,
} from './model';
import { CanvasContext, nodeTypes, type CanvasContextValue } from './nodes';
import { defaultParams } from './ParamForm';
import { DND_TYPE, Palette, QuickAddMenu } from './Palette';
import { CircuitSummary, NodePanel } from './SidePanel';
import type { DocumentHistory } from './useDocumentHistory';
import { editorShortcut } from './shortcuts';
import { useCatalog } from './useCatalog';
import { useValidation } from './useValidation';
import './editor.css';


/** The last copy on this page, for when the browser gives no system clipboard (survives
 *  moving between circuits, which keeps the page). */
const pageClipboard: { current: string | null } = { current: null };

/** The corner the minimap takes (bottom right): fitting leaves that much room below the
 * circuit, so no node sits under it. */
const MINIMAP = { width: 160, height: 100 };
const FIT_PADDING = { top: '40px', left: '40px', right: '40px', bottom: `${MINIMAP.height + 40}px` } as const;
const FIT = { padding: FIT_PADDING, maxZoom: 1 };

export interface CircuitEditorProps {
  state: DocumentHistory;
  readOnly?: boolean;
  onValidation?: (validation: Validation | null) => void;
  /** Zoom to fit again when this changes (the page resized the editor, e.g. showing the plan beside it). */
  refitOn?: unknown;
  /** Select these nodes (a new object per request; e.g. the SQL pane's cursor). */
  selectNodes?: { ids: string[] };
  /** Told the selected node ids when they change. */
  onSelectionChange?: (ids: string[]) => void;
  /** Others editing the shared document: their cursors and selections; told where our pointer is. */
  presence?: {
    peers: Peer[];
    setCursor: (at: { x: number; y: number } | null) => void;
    setView: (view: View) => void;
    /** The person whose view this canvas follows, and how to stop. */
    followed: Peer | null;
    stopFollowing: () => void;
  };
  /** Drawn inside the canvas, in its coordinates (the comment markers). */
  overlay?: ReactNode;
}

export function CircuitEditor(props: CircuitEditorProps) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

interface QuickAdd {
  x: number;
  y: number;
  flow: { x: number; y: number };
  from: { node: string; port: string; type: 'source' | 'target' };
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

function EditorInner({ state, readOnly = false, onValidation, refitOn, selectNodes, onSelectionChange, presence, overlay }: CircuitEditorProps) {
  const { doc, apply } = state;
  const { catalog, error: catalogError } = useCatalog();
  const flowApi = useReactFlow();
  const wrapper = useRef<HTMLDivElement>(null);
  const root = useRef<HTMLDivElement>(null);
  const [selectedNodes, setSelectedNodes] = useState<Set<string>>(new Set());
  const [selectedEdges, setSelectedEdges] = useState<Set<string>>(new Set());
  const [dragging, setDragging] = useState<Record<string, { x: number; y: number }>>({});
  const draggingRef = useRef<Record<string, { x: number; y: number }>>({});
  const [measured, setMeasured] = useState<Record<string, { width: number; height: number }>>({});
  const [notice, setNotice] = useState<{ text: string; bad: boolean } | null>(null);
  const [quickAdd, setQuickAdd] = useState<QuickAdd | null>(null);
  const memoryClipboard = pageClipboard;
  // Fit a loaded circuit once; a new, empty one keeps the default zoom as nodes arrive.
  const initialFit = useRef(doc.nodes.length > 0).current;
  const ports = useMemo(() => catalog?.ports ?? {}, [catalog]);

  // Drop selections of nodes that no longer exist (after undo, delete, ...).
  useEffect(() => {
    const ids = new Set(allNodes(doc).map((n) => n.node.id));
    setSelectedNodes((s) => (Array.from(s).every((id) => ids.has(id)) ? s : new Set(Array.from(s).filter((id) => ids.has(id)))));
    const keys = new Set(allEdges(doc).map(({ edge }) => edgeKey(edge)));
    setSelectedEdges((s) => (Array.from(s).every((k) => keys.has(k)) ? s : new Set(Array.from(s).filter((k) => keys.has(k)))));
  }, [doc]);

  // Selection from outside (the source pane) and back out.
  useEffect(() => {
    if (!selectNodes) return;
    setSelectedNodes(new Set(selectNodes.ids));
    setSelectedEdges(new Set());
  }, [selectNodes]);
  useEffect(() => onSelectionChange?.(Array.from(selectedNodes)), [selectedNodes, onSelectionChange]);

  const { validation, validating, validationError } = useValidation(doc, onValidation);

  const marks = useMemo(() => validationMarks(doc, validation?.errors ?? []), [doc, validation]);
  const schemas = useMemo(() => validation?.schemas ?? {}, [validation]);

  const flow = useMemo(
    () => docToFlow(doc, { catalog: ports, measured, selectedNodes, selectedEdges, positions: dragging, badEdges: marks.edges }),
    [doc, ports, measured, selectedNodes, selectedEdges, dragging, marks],
  );

  const context = useMemo<CanvasContextValue>(() => {
    const feeds = new Map<string, string>();
    for (const { edge } of allEdges(doc)) feeds.set(`${edge.to.node}.${edge.to.port}`, edge.from.node);
    return { readOnly, testIdPrefix: '', marks, schemas, feeds };
  }, [doc, readOnly, marks, schemas]);

  const say = useCallback((text: string, bad = true) => {
    setNotice({ text, bad });
  }, []);
  useEffect(() => {
    if (!notice) return;
    const timer = setTimeout(() => setNotice(null), 6000);
    return () => clearTimeout(timer);
  }, [notice]);

  // ------------------------------------------------------------ React Flow changes

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      let sizes: Record<string, { width: number; height: number }> | null = null;
      let moves: Record<string, { x: number; y: number }> | null = null;
      let selection: Set<string> | null = null;
      for (const change of changes) {
        if (change.type === 'dimensions' && change.dimensions) {
          sizes ??= {};
          sizes[change.id] = change.dimensions;
        } else if (change.type === 'position' && change.position && !readOnly) {
          moves ??= {};
          moves[change.id] = change.position;
        } else if (change.type === 'select') {
          selection ??= new Set(selectedNodes);
          if (change.selected) selection.add(change.id);
          else selection.delete(change.id);
        }
      }
      if (sizes) {
        const s = sizes;
        setMeasured((m) => {
          const changed = Object.entries(s).some(([id, d]) => m[id]?.width !== d.width || m[id]?.height !== d.height);
          return changed ? { ...m, ...s } : m;
        });
      }
      if (moves) {
        // Mirrored in a ref: onNodeDragStop runs before React re-renders with the last move.
        draggingRef.current = { ...draggingRef.current, ...moves };
        setDragging(draggingRef.current);
      }
      if (selection) setSelectedNodes(selection);
    },
    [readOnly, selectedNodes],
  );


  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      let selection: Set<string> | null = null;
      for (const change of changes) {
        if (change.type === 'select') {
          selection ??= new Set(selectedEdges);
          if (change.selected) selection.add(change.id);
          else selection.delete(change.id);
        }
      }
      if (selection) setSelectedEdges(selection);
    },
    [selectedEdges],
  );

  // ------------------------------------------------------------ connecting

  const toEdge = (c: Connection | { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }): DocEdge => ({
    from: { node: c.source, port: c.sourceHandle ?? 'out' },
    to: { node: c.target, port: c.targetHandle ?? 'in' },
  });

  const isValidConnection = useCallback(
    (c: Connection | { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }) =>
      connectionProblem(doc, toEdge(c), ports, schemas) === null,
    [doc, ports, schemas],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      if (readOnly) return;
      const edge = toEdge(c);
      const problem = connectionProblem(doc, edge, ports, schemas);
      if (problem) return say(`Not connected: ${problem}`);
      apply((d) => addEdge(d, edge));
    },
    [readOnly, doc, ports, schemas, apply, say],
  );

  const onConnectEnd = useCallback(
    (event: MouseEvent | TouchEvent, connection: FinalConnectionState) => {
      if (readOnly || connection.isValid) return;
      const fromNode = connection.fromNode;
      const fromHandle = connection.fromHandle;
      if (!fromNode || !fromHandle) return;
      const toNode = connection.toNode;
      const toHandle = connection.toHandle;
      if (toNode && toHandle) {
        // Dropped on a port that refused: say why.
        const edge: DocEdge =
          fromHandle.type === 'source'
            ? { from: { node: fromNode.id, port: fromHandle.id ?? 'out' }, to: { node: toNode.id, port: toHandle.id ?? 'in' } }
            : { from: { node: toNode.id, port: toHandle.id ?? 'out' }, to: { node: fromNode.id, port: fromHandle.id ?? 'in' } };
        const problem = connectionProblem(doc, edge, ports, schemas) ?? 'connect an output (right) to an input (left)';
        say(`Not connected: ${problem}`);
        return;
      }
      // Dropped on empty canvas (not on a node or a control): offer to add a connected node.
      const target = event.target as Element | null;
      if (!target || !wrapper.current?.contains(target) || target.closest('.react-flow__node, .react-flow__controls, .react-flow__minimap')) return;
      const point = 'changedTouches' in event ? event.changedTouches[0]! : event;
      const rect = wrapper.current!.getBoundingClientRect();
      setQuickAdd({
        x: point.clientX - rect.left,
        y: point.clientY - rect.top,
        flow: flowApi.screenToFlowPosition({ x: point.clientX, y: point.clientY }),
        from: { node: fromNode.id, port: fromHandle.id ?? 'out', type: fromHandle.type },
      });
    },
    [readOnly, doc, ports, schemas, say, flowApi],
  );

  // ------------------------------------------------------------ adding nodes

  /** The fixed point (top level) whose box holds a flow position, if any. */
  const groupAt = useCallback(
    (p: { x: number; y: number }) => {
      for (const n of flow.nodes) {
        if (n.type !== 'fixedpoint' || n.parentId) continue;
        const w = Number(n.width ?? 0);
        const h = Number(n.height ?? 0);
        if (p.x >= n.position.x && p.x <= n.position.x + w && p.y >= n.position.y && p.y <= n.position.y + h) return n;
      }
      return null;
    },
    [flow],
  );

  const onNodeDragStop = useCallback(() => {
    const moves = draggingRef.current;
    draggingRef.current = {};
    setDragging({});
    if (readOnly || !Object.keys(moves).length) return;
    let next = setPositions(doc, moves);
    // A single unwired top-level node dropped inside a fixed point's box joins its subcircuit.
    const ids = Object.keys(moves);
    if (ids.length === 1) {
      const id = ids[0]!;
      const moved = next.nodes.find((n) => n.id === id);
      const size = measured[id] ?? { width: 180, height: 64 };
      if (moved && moved.kind !== FIXEDPOINT) {
        const center = { x: (moved.position?.x ?? 0) + size.width / 2, y: (moved.position?.y ?? 0) + size.height / 2 };
        const group = groupAt(center);
        if (group) {
          try {
            next = moveIntoFixedpoint(next, id, group.id, { x: moved.position!.x - group.position.x, y: moved.position!.y - group.position.y });
            say(`Moved ${id} into fixed point ${group.id}.`, false);
          } catch (err) {
            say(err instanceof Error ? err.message : String(err));
          }
        }
      }
    }
    const result = next;
    apply(() => result);
  }, [readOnly, doc, measured, apply, say, groupAt]);

  const createNode = useCallback(
    (kind: string, at: { x: number; y: number }, connectFrom?: QuickAdd['from']) => {
      if (readOnly || !catalog) return null;
      let created: string | null = null;
      apply((d) => {
        const group = groupAt(at);
        const scope = group && kind !== FIXEDPOINT ? group.id : null;
        const position = scope && group ? { x: at.x - group.position.x, y: at.y - group.position.y } : at;
        const node = newNode(d, kind, position, defaultParams(catalog.params[kind]));
        created = node.id;
        let next = addNode(d, node, scope);
        if (connectFrom) {
          const p = ports[kind] ?? { inputs: ['in'], outputs: ['out'] };
          const edge: DocEdge | null =
            connectFrom.type === 'source'
              ? p.inputs[0]
                ? { from: { node: connectFrom.node, port: connectFrom.port }, to: { node: node.id, port: p.inputs[0] } }
                : null
              : p.outputs[0]
                ? { from: { node: node.id, port: p.outputs[0] }, to: { node: connectFrom.node, port: connectFrom.port } }
                : null;
          if (edge) {
            const problem = connectionProblem(next, edge, ports, schemas);
            if (problem) say(`Added ${node.id} but did not connect it: ${problem}`);
            else next = addEdge(next, edge);
          }
        }
        return next;
      });
      if (created) {
        setSelectedNodes(new Set([created]));
        setSelectedEdges(new Set());
      }
      return created;
    },
    [readOnly, catalog, apply, groupAt, ports, schemas, say],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (event.dataTransfer.types.includes(DND_TYPE)) {
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
    }
  }, []);

  /** The canvas on screen (in flow coordinates), less the minimap's corner. */
  const visibleCanvas = useCallback(
    (rect: DOMRect) => {
      const topLeft = flowApi.screenToFlowPosition({ x: rect.left, y: rect.top });
      const bottomRight = flowApi.screenToFlowPosition({ x: rect.right, y: rect.bottom - MINIMAP.height - 20 });
      return { x: topLeft.x, y: topLeft.y, width: bottomRight.x - topLeft.x, height: bottomRight.y - topLeft.y };
    },
    [flowApi],
  );

  /** Where a new node with its corner at `corner` may go without covering another: the
   * boxes of its scope's nodes (a fixed point's inner nodes when the corner is inside
   * its box, else the top-level nodes), and the room it has (the visible canvas, within
   * that fixed point's box). */
  const placeNew = useCallback(
    (corner: { x: number; y: number }, view: { x: number; y: number; width: number; height: number }) => {
      const group = groupAt(corner);
      const nodes = flowApi.getNodes();
      const byId = new Map(nodes.map((n) => [n.id, n]));
      const boxOf = (n: (typeof nodes)[number]) => {
        const parent = n.parentId ? byId.get(n.parentId) : undefined;
        return {
          x: n.position.x + (parent?.position.x ?? 0),
          y: n.position.y + (parent?.position.y ?? 0),
          width: n.measured?.width ?? n.width ?? 160,
          height: n.measured?.height ?? n.height ?? 50,
        };
      };
      const scope = nodes.filter((n) => (group ? n.parentId === group.id : !n.parentId));
      let room = view;
      if (group) {
        const g = boxOf(group);
        const x = Math.max(view.x, g.x);
        const y = Math.max(view.y, g.y + 30); // below its title
        room = { x, y, width: Math.min(view.x + view.width, g.x + g.width) - x, height: Math.min(view.y + view.height, g.y + g.height) - y };
      }
      return freeSpot(corner, scope.map(boxOf), room);
    },
    [flowApi, groupAt],
  );

  const onDrop = useCallback(
    (event: DragEvent) => {
      const kind = event.dataTransfer.getData(DND_TYPE);
      if (!kind || readOnly) return;
      event.preventDefault();
      const at = flowApi.screenToFlowPosition({ x: event.clientX, y: event.clientY });
      // Near an edge the node moves in so all of it shows (not under the minimap either).
      const rect = wrapper.current?.getBoundingClientRect();
      if (!rect) return createNode(kind, { x: at.x - 80, y: at.y - 25 });
      const view = visibleCanvas(rect);
      // ... and beside the nodes already there, not on top of one
      createNode(kind, placeNew(dropCorner(at, view), view));
    },
    [readOnly, flowApi, createNode, visibleCanvas, placeNew],
  );

  const addAtCenter = useCallback(
    (kind: string) => {
      const rect = wrapper.current?.getBoundingClientRect();
      if (!rect) return createNode(kind, { x: 0, y: 0 });
      const at = flowApi.screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 });
      const view = visibleCanvas(rect);
      createNode(kind, placeNew(dropCorner(at, view), view));
    },
    [flowApi, createNode, visibleCanvas, placeNew],
  );

  // ------------------------------------------------------------ commands

  const deleteSelection = useCallback(() => {
    if (readOnly || (selectedNodes.size === 0 && selectedEdges.size === 0)) return;
    apply((d) => removeElements(d, selectedNodes, selectedEdges));
  }, [readOnly, selectedNodes, selectedEdges, apply]);

  const selectAll = useCallback(() => {
    setSelectedNodes(new Set(doc.nodes.map((n) => n.id)));
    setSelectedEdges(new Set());
  }, [doc]);

  const copyText = useCallback((): string | null => {
    if (selectedNodes.size === 0) return null;
    const fragment = copySelection(doc, selectedNodes);
    if (fragment.nodes.length === 0) return null;
    const text = JSON.stringify(fragment, null, 2);
    memoryClipboard.current = text;
    return text;
  }, [doc, selectedNodes]);

  const pasteText = useCallback(
    (text: string | null) => {
      if (readOnly || !text) return false;
      const fragment = parseClipboard(text);
      if (!fragment) {
        say('The clipboard holds no circuit (expected circuit-document JSON).');
        return false;
      }
      let ids: string[] = [];
      apply((d) => {
        // Beside what is there (not on the copied nodes themselves).
        const result = pasteFragment(d, fragment, freeOffset(d, fragment, measured));
        ids = result.ids;
        return result.doc;
      });
      setSelectedNodes(new Set(ids));
      setSelectedEdges(new Set());
      say(`Pasted ${ids.length} node${ids.length === 1 ? '' : 's'}.`, false);
      return true;
    },
    [readOnly, apply, say, measured],
  );

  const focused = useCallback(() => {
    const active = document.activeElement;
    return !isTyping(active) && (!!root.current?.contains(active) || active === document.body);
  }, []);

  // System clipboard through copy/cut/paste events (no permission prompt; works across tabs).
  const pasteEventSeen = useRef(false);
  useEffect(() => {
    const onCopy = (event: ClipboardEvent) => {
      if (!focused()) return;
      const text = copyText();
      if (!text) return;
      event.clipboardData?.setData('text/plain', text);
      event.preventDefault();
      if (event.type === 'cut' && !readOnly) deleteSelection();
    };
    const onPaste = (event: ClipboardEvent) => {
      if (!focused()) return;
      pasteEventSeen.current = true;
      const text = event.clipboardData?.getData('text/plain') || memoryClipboard.current;
      if (pasteText(text)) event.preventDefault();
    };
    document.addEventListener('copy', onCopy);
    document.addEventListener('cut', onCopy);
    document.addEventListener('paste', onPaste);
    return () => {
      document.removeEventListener('copy', onCopy);
      document.removeEventListener('cut', onCopy);
      document.removeEventListener('paste', onPaste);
    };
  }, [focused, copyText, pasteText, deleteSelection, readOnly]);

  const copyToClipboard = useCallback(async () => {
    const text = copyText();
    if (!text) return say('Select nodes to copy.');
    try {
      await navigator.clipboard.writeText(text);
      say(`Copied ${selectedNodes.size} node(s) as circuit JSON.`, false);
    } catch {
      say('Copied (this page only: the browser refused the system clipboard).', false);
    }
  }, [copyText, say, selectedNodes]);

  const pasteFromClipboard = useCallback(async () => {
    let text: string | null = null;
    try {
      text = await navigator.clipboard.readText();
    } catch {
      text = memoryClipboard.current;
    }
    pasteText(text || memoryClipboard.current);
  }, [pasteText]);

  const group = useCallback(async () => {
    if (readOnly) return;
    try {
      const result = groupIntoFixedpoint(doc, selectedNodes, ports);
      // Lay the new group and its neighbours out so nothing overlaps (one undo step).
      const laid = await autoLayout(result.doc, measured).catch(() => result.doc);
      apply(() => laid);
      setSelectedNodes(new Set([result.id]));
      setTimeout(() => flowApi.fitView({ ...FIT, duration: 200 }), 60);
    } catch (err) {
      say(err instanceof Error ? err.message : String(err));
    }
  }, [readOnly, doc, apply, selectedNodes, ports, measured, say, flowApi]);

  const selectedFixedpoint =
    selectedNodes.size === 1 && doc.nodes.some((n) => n.kind === FIXEDPOINT && selectedNodes.has(n.id)) ? Array.from(selectedNodes)[0]! : null;

  const ungroup = useCallback(() => {
    if (readOnly || !selectedFixedpoint) return;
    try {
      const fp = selectedFixedpoint;
      apply((d) => ungroupFixedpoint(d, fp));
      setSelectedNodes(new Set());
    } catch (err) {
      say(err instanceof Error ? err.message : String(err));
    }
  }, [readOnly, selectedFixedpoint, apply, say]);

  const layout = useCallback(async () => {
    if (readOnly) return;
    try {
      const laid = await autoLayout(doc, measured);
      apply(() => laid);
      setTimeout(() => flowApi.fitView({ ...FIT, duration: 200 }), 60);
    } catch (err) {
      say(`Auto-layout failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }, [readOnly, doc, measured, apply, flowApi, say]);

  const fit = useCallback(() => flowApi.fitView({ ...FIT, duration: 200 }), [flowApi]);

  // Each document brought in (opened, a version loaded, a file imported) is laid out once
  // if some node has no position or nodes overlap (once their sizes are known), so that
  // nothing opens piled up. Not an edit: it adds no undo step and no unsaved change.
  const laidOutGeneration = useRef(-1);
  const latestDoc = useRef(doc);
  latestDoc.current = doc;
  const { generation, adjust } = state;
  useEffect(() => {
    if (laidOutGeneration.current === generation || !catalog) return;
    const missing = needsLayout(doc);
    const unmeasured = allNodes(doc).some(({ node }) => !measured[node.id]);
    if (!missing && unmeasured) return;
    laidOutGeneration.current = generation;
    if (!missing && !overlapping(doc, measured)) return;
    autoLayout(doc, measured).then(
      (laid) => {
        if (latestDoc.current !== doc) return; // edited meanwhile: the user's positions win
        adjust(laid);
        setTimeout(() => void flowApi.fitView(FIT), 60);
      },
      () => undefined,
    );
  }, [generation, doc, measured, catalog, adjust, flowApi]);

  // The canvas changed size on purpose: fit the circuit into it once it has been measured.
  const lastRefit = useRef(refitOn);
  useEffect(() => {
    if (Object.is(lastRefit.current, refitOn)) return;
    lastRefit.current = refitOn;
    const timer = setTimeout(() => void fit(), 80);
    return () => clearTimeout(timer);
  }, [refitOn, fit]);

  const onKeyDown = useCallback(
    (event: KeyboardEvent) => {
      if (isTyping(event.target) || !focused()) return;
      // Edits (undo/redo, paste, cut/delete, group, auto-layout) are no commands when read-only.
      const command = editorShortcut(event, readOnly);
      switch (command) {
        case 'undo':
          event.preventDefault();
          state.undo();
          break;
        case 'redo':
          event.preventDefault();
          state.redo();
          break;
        case 'select-all':
          event.preventDefault();
          selectAll();
          break;
        case 'group':
          event.preventDefault();
          void group();
          break;
        case 'paste':
          // If the browser delivers no paste event (some automation), fall back to our copy.
          pasteEventSeen.current = false;
          setTimeout(() => {
            if (!pasteEventSeen.current) pasteText(memoryClipboard.current);
          }, 80);
          break;
        case 'copy':
          copyText();
          break;
        case 'delete':
          event.preventDefault();
          deleteSelection();
          break;
        case 'fit':
          fit();
          break;
        case 'layout':
          void layout();
          break;
        case 'clear-selection':
          setSelectedNodes(new Set());
          setSelectedEdges(new Set());
          setQuickAdd(null);
          break;
        case null:
          break;
      }
    },
    [readOnly, state, selectAll, group, pasteText, copyText, deleteSelection, fit, layout, focused],
  );

  // Shortcuts work while the canvas (or nothing in particular, e.g. after a deleted node lost focus) has focus.
  useEffect(() => {
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [onKeyDown]);

  const selectedId = selectedNodes.size === 1 ? Array.from(selectedNodes)[0]! : null;
  const selected = selectedId ? findNode(doc, selectedId) : undefined;

  return (
    <div className={`editor ${readOnly ? 'readonly' : ''}`} data-testid="circuit-editor" ref={root}>
      {!readOnly && <Palette operators={catalog?.operators ?? []} onAdd={addAtCenter} error={catalogError ? messagesOf(catalogError) : []} />}
      <div>
        <div className="editor-toolbar" role="toolbar" aria-label="Editor">
          {!readOnly && (
            <>
              <button type="button" data-testid="undo" onClick={state.undo} disabled={!state.canUndo} title="Undo (Ctrl+Z)">
                Undo
              </button>
              <button type="button" data-testid="redo" onClick={state.redo} disabled={!state.canRedo} title="Redo (Ctrl+Shift+Z)">
                Redo
              </button>
              <span className="sep" />
              <button type="button" data-testid="copy" onClick={copyToClipboard} disabled={selectedNodes.size === 0} title="Copy (Ctrl+C)">
                Copy
              </button>
              <button type="button" data-testid="paste" onClick={pasteFromClipboard} title="Paste (Ctrl+V)">
                Paste
              </button>
              <button type="button" data-testid="delete" onClick={deleteSelection} disabled={selectedNodes.size + selectedEdges.size === 0} title="Delete (Del)">
                Delete
              </button>
              <button type="button" data-testid="group-fixedpoint" onClick={() => void group()} disabled={selectedNodes.size === 0} title="Group into a fixed point (Ctrl+G)">
                Group into fixed point
              </button>
              <button type="button" data-testid="ungroup-fixedpoint" onClick={ungroup} disabled={!selectedFixedpoint} title="Move a fixed point's nodes out of it">
                Ungroup
              </button>
              <span className="sep" />
              <button type="button" data-testid="auto-layout" onClick={() => void layout()} title="Auto-layout (Shift+L)">
                Auto-layout
              </button>
            </>
          )}
          <button type="button" data-testid="zoom-fit" onClick={fit} title="Zoom to fit (F)">
            Zoom to fit
          </button>
          <span className="muted" data-testid="validation-state" data-valid={validation ? String(validation.valid) : ''}>
            {validating ? 'checking…' : validation ? (validation.valid ? '✓ valid' : `${validation.errors.length} problem(s)`) : ''}
          </span>
        </div>
        <div
          className="editor-canvas"
          ref={wrapper}
          tabIndex={0}
          onDragOver={onDragOver}
          onDrop={onDrop}
          onPointerMove={presence && ((e) => presence.setCursor(flowApi.screenToFlowPosition({ x: e.clientX, y: e.clientY })))}
          onPointerLeave={presence && (() => presence.setCursor(null))}
          data-testid="editor-canvas"
        >
          {notice && (
            <div className={`editor-notice ${notice.bad ? 'bad' : ''}`} data-testid="editor-notice" role="status">
              {notice.text}
            </div>
          )}
          <CanvasContext.Provider value={context}>
            <ReactFlow
              nodes={flow.nodes}
              edges={flow.edges}
              nodeTypes={nodeTypes}
              onNodesChange={onNodesChange}
              onEdgesChange={onEdgesChange}
              onNodeDragStop={onNodeDragStop}
              onConnect={onConnect}
              onConnectEnd={onConnectEnd}
              isValidConnection={isValidConnection}
              onPaneClick={() => setQuickAdd(null)}
              nodesDraggable={!readOnly}
              nodesConnectable={!readOnly}
              deleteKeyCode={null}
              selectionKeyCode="Shift"
              multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
              fitView={initialFit}
              fitViewOptions={FIT}
              defaultViewport={{ x: 40, y: 40, zoom: 1 }}
              minZoom={0.1}
              proOptions={{ hideAttribution: true }}
            >
              <Background />
              <Controls showInteractive={false} />
              <MiniMap pannable zoomable style={MINIMAP} />
              {presence && <PresenceLayer peers={presence.peers} />}
              {overlay}
              {presence && <ViewSharing setView={presence.setView} followed={presence.followed} onStop={presence.stopFollowing} />}
            </ReactFlow>
          </CanvasContext.Provider>
          {quickAdd && catalog && (
            <QuickAddMenu
              at={quickAdd}
              operators={catalog.operators.filter((o) =>
                quickAdd.from.type === 'source' ? o.inputs.length > 0 || o.kind === FIXEDPOINT : o.outputs.length > 0,
              )}
              onPick={(kind) => {
                createNode(kind, quickAdd.flow, quickAdd.from);
                setQuickAdd(null);
              }}
              onClose={() => setQuickAdd(null)}
            />
          )}
        </div>
        {validationError.length > 0 && <p className="field-error">Validation unavailable: {validationError.join(' ')}</p>}
        {marks.global.length > 0 && (
          <ul className="problems" data-testid="circuit-problems">
            {marks.global.map((e, i) => (
              <li key={i}>{e.message}</li>
            ))}
          </ul>
        )}
      </div>
      <aside className="side-panel" data-testid="side-panel">
        {selected && catalog ? (
          <NodePanel key={selected.id} id={selected.id} doc={doc} catalog={catalog} validation={validation} apply={apply} readOnly={readOnly} onRenamed={(id) => setSelectedNodes(new Set([id]))} />
        ) : (
          <CircuitSummary doc={doc} validation={validation} selectedCount={selectedNodes.size} readOnly={readOnly} />
        )}
      </aside>
    </div>
  );
}
