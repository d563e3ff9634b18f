// The run page's side of watching together (docs/collaboration.md): the watch state
// (watchState.ts) fed by the run socket, and what this page tells it: `join` on every
// (re)connection, and while sharing, its view (the tick slider's tick, the inspected
// node), at most every SAY_EVERY_MS (the server allows 20 messages a second).

import { useCallback, useEffect, useMemo, useReducer, useRef } from 'react';
import type { ClientMessage, PresenceMessage, RunStream, SharedView, ViewMessage } from '../runStream';
import { followedView, initialWatch, peopleOf, presenterOf, watchReducer } from './watchState';

export const SAY_EVERY_MS = 100;

export function useWatching(view: SharedView) {
  const [state, dispatch] = useReducer(watchReducer, initialWatch);
  const stream = useRef<RunStream | null>(null);
  const latest = useRef({ view, sharing: state.sharing });
  latest.current = { view, sharing: state.sharing };

  const shareMessage = (): ClientMessage =>
    latest.current.sharing ? { type: 'share_view', sharing: true, ...latest.current.view } : { type: 'share_view', sharing: false };

  /** For RunStream's `greeting`: join, and say the view again when sharing. */
  const greeting = useCallback((): ClientMessage[] => (latest.current.sharing ? [{ type: 'join' }, shareMessage()] : [{ type: 'join' }]), []);
  const onPresence = useCallback((message: PresenceMessage) => dispatch({ type: 'presence', message }), []);
  const onView = useCallback((message: ViewMessage) => dispatch({ type: 'view', message }), []);
  const attach = useCallback((s: RunStream | null) => {
    stream.current = s;
  }, []);

  // While sharing, say the view when it changes (trailing, at most every SAY_EVERY_MS);
  // turning sharing off says so at once.
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastSaid = useRef(0);
  const wasSharing = useRef(false);
  useEffect(() => {
    if (!state.sharing) {
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
      if (wasSharing.current) stream.current?.send({ type: 'share_view', sharing: false });
      wasSharing.current = false;
      return;
    }
    wasSharing.current = true;
    if (timer.current) return;
    const wait = Math.max(0, lastSaid.current + SAY_EVERY_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      lastSaid.current = Date.now();
      stream.current?.send(shareMessage());
    }, wait);
  }, [state.sharing, view.tick, view.node]);
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);

  const setSharing = useCallback((on: boolean) => dispatch({ type: 'share', on }), []);
  const stopFollowing = useCallback(() => dispatch({ type: 'stopFollowing' }), []);
  const follow = useCallback(() => dispatch({ type: 'follow' }), []);

  return {
    state,
    people: useMemo(() => peopleOf(state), [state]),
    presenter: presenterOf(state),
    followed: followedView(state),
    greeting,
    onPresence,
    onView,
    attach,
    setSharing,
    stopFollowing,
    follow,
  };
}

export type Watching = ReturnType<typeof useWatching>;
