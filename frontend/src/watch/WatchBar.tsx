// Who is watching this run, the "Share my view" toggle, and the banner of the view this
// page follows (docs/collaboration.md, "Watching a run together"). The avatars and their
// colours are the circuit editor's (collab/Avatars.tsx, collab/colors.ts).

import { Avatars } from '../collab/Avatars';
import { colorOf } from '../collab/colors';
import type { Watching } from './useWatching';
import './watch.css';

export function WatchBar({ watching }: { watching: Watching }) {
  const { people, presenter, followed, state } = watching;
  if (!people.me) return null; // not on the list yet (connecting)
  const guest = people.me.guest;
  const presenterId = presenter?.user != null ? `user-${presenter.user}` : null;
  return (
    <div className="watch-bar" data-testid="watch-bar">
      <span className="muted small">Watching:</span>
      <Avatars peers={people.others} me={people.me} following={followed ? presenterId : null} label="Watching this run" />
      {people.guests > 0 && (
        <span className="guests" data-testid="guests" title="Anonymous viewers of this run (a public or shared run)">
          {people.guests === 1 ? '1 guest' : `${people.guests} guests`}
        </span>
      )}
      <button
        type="button"
        className={`share-view ${state.sharing ? 'on' : ''}`}
        data-testid="share-view"
        aria-pressed={state.sharing}
        disabled={guest}
        title={guest ? 'Sign in to share your view' : 'While on, the others follow your tick slider and the node you inspect'}
        onClick={() => watching.setSharing(!state.sharing)}
      >
        {state.sharing ? 'Sharing my view' : 'Share my view'}
      </button>
      {state.sharing && (
        <span className="watch-banner" data-testid="sharing-banner" style={{ borderColor: colorOf(people.me.name) }}>
          The others follow your tick slider and node selection.
        </span>
      )}
      {followed && (
        <span className="watch-banner" data-testid="following-banner" style={{ borderColor: colorOf(followed.name) }}>
          <span data-testid="following-text">Following {followed.name}’s view</span>
          {state.takenOverBy && <span className="muted small"> ({state.takenOverBy} took over presenting)</span>}{' '}
          <button type="button" className="link" data-testid="stop-following" onClick={watching.stopFollowing}>
            Stop following
          </button>
        </span>
      )}
      {!followed && presenter && !state.sharing && (
        <span className="watch-banner idle" data-testid="presenter-banner" style={{ borderColor: colorOf(presenter.name) }}>
          {presenter.name} is sharing their view.{' '}
          <button type="button" className="link" data-testid="follow-presenter" onClick={watching.follow}>
            Follow
          </button>
        </span>
      )}
    </div>
  );
}
