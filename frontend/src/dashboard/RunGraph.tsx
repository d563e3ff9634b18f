// The run's circuit as a read-only canvas: each node shows its NodeBadge (frontier,
// rows, state, ms) and is filled by its share of the latest tick's time.
// (A minimal @xyflow/react canvas of the dashboard's own, separate from the editor's
// CircuitCanvas.)

import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { memo, useMemo } from 'react';
import type { CircuitDocument, CircuitNode } from '../api';
import type { Frontier, Stats } from '../api/runs';
import { drawnGraph, nodeDecorations, SHARE_GRADIENT, type NodeDecoration } from './graphDecorations';
import { NodeBadge } from './NodeBadge';
import { HeatBadge, HeatLegend } from '../profile/HeatBadge';
import type { GraphHeat } from '../profile/heat';

interface Props {
  document: CircuitDocument;
  frontier: Frontier;
  stats: Stats;
  /** The tick the frontier and stats belong to (shown in the caption). */
  statsTick: number | null;
  /** A click on a node (inner nodes of fixed points too): the node inspector opens on it,
   * and the operator profile plots its metric. */
  onNodeClick?: (nodeId: string) => void;
  /** The node the inspector shows (outlined). */
  inspected?: string | null;
  /** The operator profile's heatmap: when set, it fills the nodes and names the legend. */
  heat?: GraphHeat | null;
}

type RunNodeData = {
  node: CircuitNode;
  decoration: NodeDecoration | undefined;
  hasInputs: boolean;
  hasOutputs: boolean;
  inspected: boolean;
  heat?: GraphHeat | null;
};
type RunFlowNode = Node<RunNodeData, 'run'> | Node<RunNodeData, 'fixedpoint'>;

const RunNode = memo(function RunNode({ data }: NodeProps<RunFlowNode>) {
  const { node, decoration, heat } = data;
  return (
    <div
      className={`run-node run-node-${node.kind}${data.inspected ? ' inspected' : ''}${heat?.selected === node.id ? ' selected' : ''}`}
      data-testid={`graph-node-${node.id}`}
      data-heat-colour={heat ? (heat.colours[node.id] ?? '') : undefined}
      style={{ background: heat ? heat.colours[node.id] : decoration?.colour }}
      title={heat ? heat.values[node.id] : decoration ? `${Math.round(decoration.share * 100)}% of the tick's time` : undefined}
    >
      {data.hasInputs && <Handle type="target" position={Position.Left} isConnectable={false} />}
      <div className="run-node-head">
        <span className="run-node-kind">{node.kind}</span>
        <code className="run-node-id">{node.id}</code>
      </div>
      <NodeBadge nodeId={node.id} decoration={decoration} />
      {heat && <HeatBadge nodeId={node.id} heat={heat} />}
      {data.hasOutputs && <Handle type="source" position={Position.Right} isConnectable={false} />}
    </div>
  );
});

/** A fixed point: a group around its subcircuit, with its own badge (inner iteration). */
const FixedPointNode = memo(function FixedPointNode({ data }: NodeProps<RunFlowNode>) {
  const { node, decoration } = data;
  return (
    <div
      className={`run-node run-group${data.inspected ? ' inspected' : ''}`}
      data-testid={`graph-node-${node.id}`}
      style={{ borderColor: decoration && decoration.share > 0 ? decoration.colour : undefined }}
      title={decoration ? `${Math.round(decoration.share * 100)}% of the tick's time (its inner nodes together)` : undefined}
    >
      <div className="run-node-head">
        <span className="run-node-kind">{node.kind}</span>
        <code className="run-node-id">{node.id}</code>
      </div>
      <NodeBadge nodeId={node.id} decoration={decoration} />
      {data.heat && <HeatBadge nodeId={node.id} heat={data.heat} />}
    </div>
  );
});

const nodeTypes = { run: RunNode, fixedpoint: FixedPointNode };
/** The smallest zoom the graph opens at: badge text (0.68rem) stays about 9 px or more. */
export const READABLE_ZOOM = 0.8;

export function RunGraph({ document, frontier, stats, statsTick, onNodeClick, inspected = null, heat }: Props) {
  const graph = useMemo(() => drawnGraph(document), [document]);
  const decorations = useMemo(
    () =>
      nodeDecorations(
        graph.nodes.map((n) => n.node.id),
        frontier,
        stats,
        new Set(graph.nodes.filter((n) => n.size).map((n) => n.node.id)),
      ),
    [graph, frontier, stats],
  );
  const nodes: RunFlowNode[] = useMemo(
    () =>
      graph.nodes.map(({ node, position, parentId, size }) => ({
        id: node.id,
        type: size ? ('fixedpoint' as const) : ('run' as const),
        position,
        ...(parentId ? { parentId, extent: 'parent' as const } : {}),
        ...(size ? { style: { width: size.width, height: size.height }, zIndex: -1 } : {}),
        data: {
          node,
          decoration: decorations[node.id],
          hasInputs: graph.edges.some((e) => e.target === node.id),
          hasOutputs: graph.edges.some((e) => e.source === node.id),
          inspected: node.id === inspected,
          heat,
        },
        draggable: false,
        connectable: false,
        selectable: false,
      })),
    [graph, decorations, inspected, heat],
  );
  const edges: Edge[] = useMemo(
    () => graph.edges.map((e) => ({ ...e, selectable: false })),
    [graph],
  );

  return (
    <div className="run-graph" data-testid="run-graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        edgesFocusable={false}
        onNodeClick={onNodeClick ? (_, n) => onNodeClick(n.id) : undefined}
        nodesFocusable={false}
        // Fitted, but never below a zoom where the badges' text is readable (pan for the rest).
        fitView
        fitViewOptions={{ minZoom: READABLE_ZOOM, maxZoom: 1.2 }}
        minZoom={0.2}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={24} />
        <Controls showInteractive={false} />
      </ReactFlow>
      <p className="graph-caption muted graph-legend" data-testid="graph-caption">
        {statsTick === null ? (
          'No tick yet.'
        ) : heat ? (
          <HeatLegend heat={heat} />
        ) : (
          <>
            <span>Frontier and stats of tick {statsTick}. Fill: each node&apos;s share of the tick&apos;s time (ms):</span>
            <span>0%</span>
            <span className="scale" data-testid="graph-scale" style={{ background: SHARE_GRADIENT }} />
            <span>100%</span>
            {onNodeClick && <span>· Click a node to inspect its data.</span>}
          </>
        )}
      </p>
    </div>
  );
}
