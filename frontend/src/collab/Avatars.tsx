// Avatars of the people present, in their colours (collab/colors.ts), yours marked: the
// circuit editor's header (co-editing) and the run page's watchers (watch/WatchBar.tsx).

import './avatars.css';

/** Someone present: an id unique on the page, their name and colour, and their role
 *  ('you', 'writer', 'viewer', or any other word the page uses). */
export interface Person<Id extends number | string = number | string> {
  clientId: Id;
  name: string;
  color: string;
  role: string;
}

export function Avatars<Id extends number | string>({ peers, me, following = null, onFollow, label = 'People here' }: {
  peers: Person<Id>[];
  /** You: shown first, marked (your id is never one of the peers'). */
  me: { name: string; color: string };
  /** Whose view this page follows. */
  following?: Id | null;
  /** Follow (or, for the one followed, stop following) this person's view. */
  onFollow?: (clientId: Id | null) => void;
  label?: string;
}) {
  const people: Person<Id | 'you'>[] = [{ clientId: 'you', name: me.name, color: me.color, role: 'you' }, ...peers];
  return (
    <ul className="avatars" data-testid="presence" aria-label={label}>
      {people.map((p) => {
        const id = p.clientId as Id;
        const follows = p.role !== 'you' && onFollow ? () => onFollow(following === id ? null : id) : undefined;
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

