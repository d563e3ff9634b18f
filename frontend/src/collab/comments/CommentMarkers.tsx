// Inside <ReactFlow>: a marker at the top right of each node with open comment threads
// (their count); clicking it opens the node's threads in the comments panel.

import { useInternalNode, ViewportPortal } from '@xyflow/react';

function Marker({ node, count, onOpen }: { node: string; count: number; onOpen: (node: string) => void }) {
  const internal = useInternalNode(node);
  if (!internal) return null;
  const { x, y } = internal.internals.positionAbsolute;
  const width = internal.measured.width ?? 0;
  return (
    <button
      type="button"
      className="comment-marker nodrag nopan"
      style={{ transform: `translate(${x + width - 12}px, ${y - 16}px)` }}
      data-testid="comment-marker"
      data-node={node}
      title={`${count} open comment thread${count === 1 ? '' : 's'} on ${node}`}
      aria-label={`Open the comments on ${node} (${count})`}
      onClick={(e) => {
        e.stopPropagation();
        onOpen(node);
      }}
    >
      <svg width="12" height="12" viewBox="0 0 16 16" aria-hidden="true">
        <path d="M2 2h12v9H7l-4 3v-3H2z" fill="currentColor" />
      </svg>
      <span className="comment-marker-count">{count}</span>
    </button>
  );
}

export function CommentMarkers({ openOnNode, onOpen }: { openOnNode: Map<string, number>; onOpen: (node: string) => void }) {
  return (
    <ViewportPortal>
      {[...openOnNode].map(([node, count]) => (
        <Marker key={node} node={node} count={count} onOpen={onOpen} />
      ))}
    </ViewportPortal>
  );
}
