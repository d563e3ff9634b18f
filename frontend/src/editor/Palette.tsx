// The operator palette (grouped, searchable; drag onto the canvas or click to add) and the
// quick-add menu shown when a wire is dropped on empty canvas.

import { useState } from 'react';
import type { Operator } from '../api/editor';
import { paletteGroups } from './catalog';

export const DND_TYPE = 'application/x-dbspweb-kind';

export function Palette({ operators, onAdd, error }: { operators: Operator[]; onAdd: (kind: string) => void; error: string[] }) {
  const [search, setSearch] = useState('');
  const groups = paletteGroups(operators, search);
  return (
    <nav className="palette" data-testid="palette" aria-label="Operators">
      <input type="search" placeholder="Search operators" value={search} onChange={(e) => setSearch(e.target.value)} data-testid="palette-search" />
      {error.length > 0 && <p className="field-error">{error.join(' ')}</p>}
      {groups.map((g) => (
        <div key={g.id} data-testid={`palette-group-${g.id}`}>
          <h4>{g.title}</h4>
          {g.operators.map((op) => (
            <button
              type="button"
              key={op.kind}
              className="palette-item"
              draggable
              data-testid={`palette-${op.kind}`}
              title={`${op.doc}\n\nDrag onto the canvas, or click to add.`}
              onDragStart={(e) => {
                e.dataTransfer.setData(DND_TYPE, op.kind);
                e.dataTransfer.setData('text/plain', op.kind);
                e.dataTransfer.effectAllowed = 'copy';
              }}
              onClick={() => onAdd(op.kind)}
            >
              {op.title}
              <small>
                {op.kind}
                {op.inputs.length ? ` (${op.inputs.join(', ')})` : ''}
              </small>
            </button>
          ))}
        </div>
      ))}
      {operators.length > 0 && groups.length === 0 && <p className="muted">No operator matches.</p>}
    </nav>
  );
}

export function QuickAddMenu({ at, operators, onPick, onClose }: { at: { x: number; y: number }; operators: Operator[]; onPick: (kind: string) => void; onClose: () => void }) {
  const [search, setSearch] = useState('');
  const [active, setActive] = useState(0);
  const matches = paletteGroups(operators, search).flatMap((g) => g.operators);
  return (
    <div className="quick-add" style={{ left: at.x, top: at.y }} data-testid="quick-add">
      <input
        autoFocus
        placeholder="Add and connect…"
        value={search}
        data-testid="quick-add-search"
        onChange={(e) => {
          setSearch(e.target.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && matches[active]) onPick(matches[active].kind);
          else if (e.key === 'Escape') onClose();
          else if (e.key === 'ArrowDown') setActive((a) => Math.min(a + 1, matches.length - 1));
          else if (e.key === 'ArrowUp') setActive((a) => Math.max(a - 1, 0));
        }}
      />
      {matches.map((op, i) => (
        <button type="button" key={op.kind} className={i === active ? 'active' : ''} data-testid={`quick-add-${op.kind}`} onClick={() => onPick(op.kind)}>
          {op.title} <small className="muted">{op.kind}</small>
        </button>
      ))}
    </div>
  );
}

