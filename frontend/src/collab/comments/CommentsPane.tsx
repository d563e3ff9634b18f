// Comments on the circuit page, in one hook: the canvas's markers (for the editor's
// `overlay`), the side panel, and the page's "Comments" and "Comment" actions.

import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { Doc } from '../../editor/model';
import { CommentMarkers } from './CommentMarkers';
import { CommentsPanel } from './CommentsPanel';
import { placeThreads } from './threads';
import { useComments } from './useComments';

export interface CommentsPane {
  /** Inside the editor's <ReactFlow>: the markers. */
  overlay: ReactNode;
  /** The side panel (null while closed). */
  panel: ReactNode;
  /** The page's actions: show the comments, comment on the selected node. */
  actions: ReactNode;
}

export function useCommentsPane(options: {
  circuitId: number | null;
  me: string | null;
  share?: string;
  doc: Doc;
  canComment: boolean;
  canEdit: boolean;
  selectedIds: string[];
  /** A thread to open (from the address: a mention's link). */
  thread?: number;
  onSelectNode: (id: string) => void;
  /** Whether the panel shows (the page's: it closes its other side panes when this opens). */
  open: boolean;
  setOpen: (open: boolean) => void;
}): CommentsPane {
  const { circuitId, me, share, doc, canComment, canEdit, selectedIds, thread, onSelectNode, open, setOpen } = options;
  const comments = useComments(circuitId, me, share);
  const [node, setNode] = useState<string | null>(null);
  const [composing, setComposing] = useState<string | null>(null);
  const nodeIds = useMemo(() => new Set(doc.nodes.map((n) => n.id)), [doc]);
  const { openOnNode } = useMemo(() => placeThreads(comments.threads, nodeIds), [comments.threads, nodeIds]);
  const show = (focus: string | null) => {
    setNode(focus);
    setOpen(true);
  };

  // A mention's link: open its thread's node once the threads are here.
  const [opened, setOpened] = useState<number | null>(null);
  useEffect(() => {
    if (thread === undefined || opened === thread || !comments.loaded) return;
    const found = comments.threads.find((t) => t.id === thread);
    setOpened(thread);
    show(found ? found.node : null);
    if (found && nodeIds.has(found.node)) onSelectNode(found.node);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [thread, comments.loaded, comments.threads]);

  const selected = selectedIds.length === 1 ? selectedIds[0]! : null;
  const openCount = comments.threads.filter((t) => !t.resolved).length;
  if (circuitId === null) return { overlay: null, panel: null, actions: null };
  return {
    overlay: <CommentMarkers openOnNode={openOnNode} onOpen={(n) => show(n)} />,
    panel: open ? (
      <CommentsPanel
        comments={comments}
        node={node}
        composing={composing}
        nodeIds={nodeIds}
        me={me}
        canComment={canComment}
        canEdit={canEdit}
        onShowAll={() => setNode(null)}
        onComposed={() => setComposing(null)}
        onSelectNode={(n) => {
          setNode(n);
          onSelectNode(n);
        }}
        onClose={() => {
          setOpen(false);
          setComposing(null);
        }}
      />
    ) : null,
    actions: (
      <>
        <button type="button" data-testid="toggle-comments" aria-pressed={open} onClick={() => (open ? setOpen(false) : show(null))}>
          Comments{openCount ? ` (${openCount})` : ''}
        </button>
        {canComment && (
          <button
            type="button"
            data-testid="comment-node"
            disabled={!selected}
            title={selected ? `Start a comment thread on ${selected}` : 'Select one node to comment on it'}
            onClick={() => {
              if (!selected) return;
              setComposing(selected);
              show(selected);
            }}
          >
            Comment
          </button>
        )}
      </>
    ),
  };
}
