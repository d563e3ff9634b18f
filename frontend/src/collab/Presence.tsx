// Who is here: avatars for the page header (click one to follow that person's view), and
// others' cursors and selections on the canvas; each page tells the others its view.

import { useInternalNode, useOnViewportChange, useReactFlow, useStoreApi, ViewportPortal, type Viewport } from '@xyflow/react';
import { useEffect, useRef } from 'react';
import type { Peer, View } from './useSharedDocument';

export function Avatars({ peers, me, following = null, onFollow }: {
  peers: Peer[];
  me: { name: string; color: string };
  /** Whose view this page follows. */
  following?: number | null;
  /** Follow (or, for the one followed, stop following) this person's view. */
  onFollow?: (clientId: number | null) => void;
}) {
  const people = [{ clientId: 0, name: me.name, color: me.color, role: 'you' }, ...peers.map((p) => ({ ...p, role: p.role as string }))];
  return (
    <ul className="avatars" data-testid="presence" aria-label="People here">
      {people.map((p) => {
        const follows = p.role !== 'you' && onFollow ? () => onFollow(following === p.clientId ? null : p.clientId) : undefined;
        return (
          <li
            key={p.clientId}
            className={`avatar ${p.role === 'you' ? 'me' : ''} ${following === p.clientId ? 'followed' : ''}`}
            style={{ background: p.color }}
            title={`${p.name || 'anonymous'}${p.role === 'you' ? ' (you)' : p.role === 'viewer' ? ' (viewing)' : ''}`}
            data-testid={p.role === 'you' ? 'avatar-me' : 'avatar'}
            data-name={p.name}
            role={follows ? 'button' : undefined}
            tabIndex={follows ? 0 : undefined}
            aria-pressed={follows ? following === p.clientId : undefined}
            aria-label={follows ? `Follow ${p.name || 'anonymous'}'s view` : undefined}
            onClick={follows}
            onKeyDown={follows && ((e) => (e.key === 'Enter' || e.key === ' ') && follows())}
          >
            {(p.name || '?').slice(0, 1).toUpperCase()}
          </li>
        );
      })}
    </ul>
  );
}

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
