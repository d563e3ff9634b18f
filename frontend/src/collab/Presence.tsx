// Who is here: avatars for the page header (collab/Avatars.tsx: click one to follow that
// person's view), and others' cursors and selections on the canvas; each page tells the others its view.

import { useInternalNode, useOnViewportChange, useReactFlow, useStoreApi, ViewportPortal, type Viewport } from '@xyflow/react';
import { useEffect, useRef } from 'react';
import type { Peer, View } from './useSharedDocument';

export { Avatars } from './Avatars';

function Outline({ id, color }: { id: string; color: string }) {
  const node = useInternalNode(id);
  if (!node) return null;
  const { x, y } = node.internals.positionAbsolute;
  const width = node.measured.width ?? 0;
  const height = node.measured.height ?? 0;
  return <div className="peer-selection" style={{ transform: `translate(${x - 4}px, ${y - 4}px)`, width: width + 8, height: height + 8, borderColor: color }} />;
}

/** Inside <ReactFlow>: drawn in the canvas's coordinates, so it pans and zooms with it. */
export function PresenceLayer({ peers }: { peers: Peer[] }) {
  return (
    <ViewportPortal>
      {peers.flatMap((p) => p.selection.map((id) => <Outline key={`${p.clientId}:${id}`} id={id} color={p.color} />))}
      {peers.map(
        (p) =>
          p.cursor && (
            <div key={p.clientId} className="peer-cursor" data-testid="peer-cursor" style={{ transform: `translate(${p.cursor.x}px, ${p.cursor.y}px)`, color: p.color }}>
              <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">
                <path d="M1 1 L15 7 L8 9 L6 15 Z" fill="currentColor" stroke="white" strokeWidth="1" />
              </svg>
              <span style={{ background: p.color }}>{p.name || 'anonymous'}</span>
            </div>
          ),
      )}
    </ViewportPortal>
  );
}

/** The view's centre in the canvas's coordinates, and its zoom: the same place whatever the
 *  size of the screen showing it. */
function viewOf(viewport: Viewport, width: number, height: number): View {
  return { x: (width / 2 - viewport.x) / viewport.zoom, y: (height / 2 - viewport.y) / viewport.zoom, zoom: viewport.zoom };
}

const SAY_VIEW_EVERY_MS = 50;

/** Inside <ReactFlow>: tells the others this page's view (at most every SAY_VIEW_EVERY_MS),
 *  shows the view of the person followed, and stops following at this person's own pan or
 *  zoom (a pointer pressed on the canvas or a wheel turned over it). */
export function ViewSharing({ setView, followed, onStop }: { setView: (view: View) => void; followed: Peer | null; onStop: () => void }) {
  const flow = useReactFlow();
  const store = useStoreApi();
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const say = () => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      const { width, height, transform } = store.getState();
      setView(viewOf({ x: transform[0], y: transform[1], zoom: transform[2] }, width, height));
    }, SAY_VIEW_EVERY_MS);
  };
  useOnViewportChange({ onChange: say });
  useEffect(() => {
    say(); // once, when the canvas is there
    return () => {
      if (pending.current) clearTimeout(pending.current);
    };
  }, []);

  const view = followed?.view ?? null;
  useEffect(() => {
    if (!view) return;
    const { width, height } = store.getState();
    void flow.setViewport({ x: width / 2 - view.x * view.zoom, y: height / 2 - view.y * view.zoom, zoom: view.zoom });
  }, [view, flow, store]);

  const following = followed !== null;
  useEffect(() => {
    const canvas = store.getState().domNode;
    if (!following || !canvas) return;
    canvas.addEventListener('pointerdown', onStop, true);
    canvas.addEventListener('wheel', onStop, true);
    return () => {
      canvas.removeEventListener('pointerdown', onStop, true);
      canvas.removeEventListener('wheel', onStop, true);
    };
  }, [following, onStop, store]);
  return null;
}
