// Watching a run together (docs/collaboration.md): the run page's state of who is
// watching and whose view it follows, as a reducer over the run socket's `presence` and
// `view` messages (runStream.ts) and this person's own choices. Pure: no socket, no React.
//
// - Sharing is "last one wins" on the server: when someone else starts, this page's
//   sharing is turned off there, and the next presence list says so; the page then turns
//   its toggle off and follows them. (Until the server has confirmed this page's own start,
//   an older list that does not show it sharing yet is not taken for that.)
// - A page follows whoever shares, by default and when it opens while someone shares.
//   "Stop following" (or moving the slider or picking a node yourself) frees it until
//   "Follow" is clicked again, whoever shares next.

import { colorOf } from '../collab/colors';
import type { PresenceMessage, SharedView, ViewMessage, Watcher } from '../runStream';

export interface WatchState {
  /** This socket's id on the list (null before the first presence message). */
  you: string | null;
  watchers: Watcher[];
  /** The presenter's latest view, by their socket id. */
  views: Record<string, SharedView>;
  /** This page shares its view (its toggle). */
  sharing: boolean;
  /** The server has listed this page as sharing since the toggle was turned on. */
  confirmed: boolean;
  /** This page follows whoever shares (false after "Stop following"). */
  following: boolean;
  /** Set when someone else took over presenting from this page (for a notice). */
  takenOverBy: string | null;
}

export const initialWatch: WatchState = { you: null, watchers: [], views: {}, sharing: false, confirmed: false, following: true, takenOverBy: null };

export type WatchAction =
  | { type: 'presence'; message: PresenceMessage }
  | { type: 'view'; message: ViewMessage }
  | { type: 'share'; on: boolean }
  | { type: 'stopFollowing' }
  | { type: 'follow' };

export function watchReducer(state: WatchState, action: WatchAction): WatchState {
  switch (action.type) {
    case 'presence': {
      const { you, watchers } = action.message;
      const views: Record<string, SharedView> = {};
      for (const w of watchers) if (w.sharing && w.view) views[w.id] = w.view;
      const mine = watchers.find((w) => w.id === you);
      let { sharing, confirmed, following, takenOverBy } = state;
      if (sharing && mine?.sharing) confirmed = true;
      if (sharing && confirmed && mine && !mine.sharing) {
        // Someone else started sharing: theirs wins; this page follows them now.
        const other = watchers.find((w) => w.sharing && w.id !== you);
        sharing = false;
        confirmed = false;
        following = true;
        takenOverBy = other ? other.name : null;
      }
      return { ...state, you, watchers, views, sharing, confirmed, following, takenOverBy };
    }
    case 'view': {
      const { from, tick, node } = action.message;
      if (!state.watchers.some((w) => w.id === from && w.sharing)) return state; // not (or no longer) the presenter
      return { ...state, views: { ...state.views, [from]: { tick, node } } };
    }
    case 'share':
      return { ...state, sharing: action.on, confirmed: false, takenOverBy: null };
    case 'stopFollowing':
      return state.following ? { ...state, following: false } : state;
    case 'follow':
      return { ...state, following: true };
  }
}

/** Who shares their view now (not this page), or null. */
export function presenterOf(state: WatchState): Watcher | null {
  return state.watchers.find((w) => w.sharing && w.id !== state.you) ?? null;
}

/** The view this page shows because it follows someone: null when it does not. */
export function followedView(state: WatchState): (SharedView & { name: string }) | null {
  const presenter = presenterOf(state);
  if (!presenter || state.sharing || !state.following) return null;
  const view = state.views[presenter.id] ?? presenter.view;
  return view ? { ...view, name: presenter.name } : null;
}

export interface WatchPeople {
  me: { name: string; color: string; guest: boolean } | null;
  /** The other signed-in people (one per person, however many tabs they have open). */
  others: { clientId: string; name: string; color: string; role: string }[];
  /** Anonymous viewers, this page not counted. */
  guests: number;
}

/** The list as the page shows it: one avatar per signed-in person, the guests counted. */
export function peopleOf(state: WatchState): WatchPeople {
  const mine = state.watchers.find((w) => w.id === state.you) ?? null;
  const seen = new Set<number>();
  if (mine?.user != null) seen.add(mine.user);
  const others: WatchPeople['others'] = [];
  let guests = 0;
  for (const w of state.watchers) {
    if (w.id === state.you) continue;
    if (w.user == null) {
      guests += 1;
      continue;
    }
    if (seen.has(w.user)) continue;
    seen.add(w.user);
    others.push({ clientId: `user-${w.user}`, name: w.name, color: colorOf(w.name), role: 'viewer' });
  }
  const me = mine ? { name: mine.name || 'guest', color: colorOf(mine.name), guest: mine.user == null } : null;
  return { me, others, guests };
}
