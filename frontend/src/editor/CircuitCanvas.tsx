// A read-only canvas of a circuit document (used by the compiled-plan pane; the run
// dashboard has its own dashboard/RunGraph, shared links open the editor read-only).
// Props are stable: document, readOnly, nodeDecorations.

import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { CircuitDocument } from '../api';
import { docToFlow } from './flow';
import { autoLayout, needsLayout, type LayoutDirection } from './layout';
import { allEdges, type Doc, type DocNode, type Schemas, type ValidationMarks } from './model';
import { CanvasContext, nodeTypes, type CanvasContextValue } from './nodes';
import { useCatalog } from './useCatalog';
import './editor.css';

/** A badge shown under a node: free content, or a small label/value list. */
export type NodeDecoration = ReactNode | { badges: { label: string; value: ReactNode; tone?: 'info' | 'ok' | 'warn' | 'bad' }[] };

export interface CircuitCanvasProps {
  document: CircuitDocument | Doc;
  /** The smallest zoom the initial fit may choose (keeps labels readable; default 0.1). */
  minFitZoom?: number;
  /** Always read-only today; kept for symmetry with the editor (which has its own canvas). */
  readOnly?: boolean;
  nodeDecorations?: Record<string, NodeDecoration>;
  /** Validation marks / inferred schemas to show (optional). */
  marks?: ValidationMarks;
  schemas?: Schemas;
  /** Lay nodes out with ELK: 'auto' when some node has no position (default), always, or never. */
  layout?: 'auto' | 'always' | 'never';
  /** Data-flow direction of the auto-layout: 'RIGHT' (default) or 'DOWN' for tall, narrow panes. */
  layoutDirection?: LayoutDirection;
  /** Test id prefix for nodes and handles (e.g. "plan-"). */
  testIdPrefix?: string;
  className?: string;
  height?: number | string;
  /** Class per node (the plan view styles inserted nodes). */
  nodeClass?: (node: DocNode) => string | undefined;
  minimap?: boolean;
}

function renderDecoration(d: NodeDecoration): ReactNode {
  if (d && typeof d === 'object' && 'badges' in (d as object) && Array.isArray((d as { badges: unknown }).badges)) {
    return (
      <span className="node-badges">
        {(d as { badges: { label: string; value: ReactNode; tone?: string }[] }).badges.map((b, i) => (
          <span key={i} className={`node-badge tone-${b.tone ?? 'info'}`} data-badge={b.label}>
            {b.label} <b>{b.value}</b>
          </span>
        ))}
      </span>
    );
  }
  return d as ReactNode;
}

function Inner(props: CircuitCanvasProps) {
  const { catalog } = useCatalog();
  const source = props.document as Doc;
  const [doc, setDoc] = useState<Doc | null>(null);
  const { fitView } = useReactFlow();
  const mode = props.layout ?? 'auto';
  const direction = props.layoutDirection ?? 'RIGHT';
  const minFitZoom = props.minFitZoom ?? 0.1;

  useEffect(() => {
    let active = true;
    const normalized: Doc = { ...source, nodes: source.nodes ?? [], edges: source.edges ?? [] };
    if (mode === 'always' || (mode === 'auto' && needsLayout(normalized))) {
      autoLayout(normalized, {}, direction).then(
        (laid) => active && setDoc(laid),
        () => active && setDoc(normalized),
      );
    } else setDoc(normalized);
    return () => {
      active = false;
    };
  }, [source, mode, direction]);

  const flow = useMemo(
    () => (doc ? docToFlow(doc, { catalog: catalog?.ports ?? {}, badEdges: props.marks?.edges, nodeClass: props.nodeClass }) : null),
    [doc, catalog, props.marks, props.nodeClass],
  );

  useEffect(() => {
    if (flow) requestAnimationFrame(() => fitView({ padding: 0.15, maxZoom: 1.2, minZoom: minFitZoom }));
  }, [flow, fitView, minFitZoom]);

  const context = useMemo<CanvasContextValue>(() => {
    const feeds = new Map<string, string>();
    if (doc) for (const { edge } of allEdges(doc)) feeds.set(`${edge.to.node}.${edge.to.port}`, edge.from.node);
    const decorations: Record<string, ReactNode> = {};
    for (const [id, d] of Object.entries(props.nodeDecorations ?? {})) decorations[id] = renderDecoration(d);
    return { readOnly: true, testIdPrefix: props.testIdPrefix ?? '', marks: props.marks, schemas: props.schemas, feeds, decorations };
  }, [doc, props.nodeDecorations, props.testIdPrefix, props.marks, props.schemas]);

  return (
    <CanvasContext.Provider value={context}>
      <ReactFlow
        nodes={flow?.nodes ?? []}
        edges={flow?.edges ?? []}
        nodeTypes={nodeTypes}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        edgesFocusable={false}
        fitView
        minZoom={0.1}
        proOptions={{ hideAttribution: true }}
      >
        <Background />
        <Controls showInteractive={false} />
        {props.minimap && <MiniMap pannable zoomable />}
      </ReactFlow>
    </CanvasContext.Provider>
  );
}

export function CircuitCanvas(props: CircuitCanvasProps) {
  return (
    <div
      className={`circuit-canvas ${props.className ?? ''}`}
      style={{ height: props.height ?? 420 }}
      data-testid={`${props.testIdPrefix ?? ''}circuit-canvas`}
    >
      <ReactFlowProvider>
        <Inner {...props} />
      </ReactFlowProvider>
    </div>
  );
}
