// Who is here: avatars for the page header, and others' cursors and selections on the canvas.

import { useInternalNode, ViewportPortal } from '@xyflow/react';
import type { Peer } from './useSharedDocument';

export function Avatars({ peers, me }: { peers: Peer[]; me: { name: string; color: string } }) {
  const people = [{ clientId: 0, name: me.name, color: me.color, role: 'you' }, ...peers.map((p) => ({ ...p, role: p.role as string }))];
  return (
    <ul className="avatars" data-testid="presence" aria-label="People here">
      {people.map((p) => (
        <li
          key={p.clientId}
          className={`avatar ${p.role === 'you' ? 'me' : ''}`}
          style={{ background: p.color }}
          title={`${p.name || 'anonymous'}${p.role === 'you' ? ' (you)' : p.role === 'viewer' ? ' (viewing)' : ''}`}
          data-testid={p.role === 'you' ? 'avatar-me' : 'avatar'}
          data-name={p.name}
        >
          {(p.name || '?').slice(0, 1).toUpperCase()}
        </li>
      ))}
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
