import { describe, expect, it } from 'vitest';
import type { Watcher } from '../runStream';
import { followedView, initialWatch, peopleOf, presenterOf, watchReducer, type WatchState } from './watchState';

const w = (id: string, name: string, user: number | null, sharing = false, view: Watcher['view'] = null): Watcher => ({ id, name, user, sharing, view });
const presence = (state: WatchState, you: string, watchers: Watcher[]) => watchReducer(state, { type: 'presence', message: { type: 'presence', you, watchers } });

describe('watching a run together', () => {
  it('lists one avatar per signed-in person, guests counted, this page apart', () => {
    const s = presence(initialWatch, 'b1', [w('a1', 'alice', 1), w('b1', 'bob', 2), w('a2', 'alice', 1), w('g1', '', null), w('g2', '', null), w('b2', 'bob', 2)]);
    const people = peopleOf(s);
    expect(people.me).toMatchObject({ name: 'bob', guest: false });
    expect(people.others.map((p) => p.name)).toEqual(['alice']);
    expect(people.guests).toBe(2);
    const asGuest = peopleOf(presence(initialWatch, 'g1', [w('a1', 'alice', 1), w('g1', '', null), w('g2', '', null)]));
    expect(asGuest.me).toMatchObject({ name: 'guest', guest: true });
    expect(asGuest.guests).toBe(1);
  });

  it("follows the presenter's view, from the list and then from view messages, until stopped", () => {
    let s = presence(initialWatch, 'b1', [w('a1', 'alice', 1, true, { tick: 2, node: null }), w('b1', 'bob', 2)]);
    expect(followedView(s)).toEqual({ tick: 2, node: null, name: 'alice' });
    s = watchReducer(s, { type: 'view', message: { type: 'view', from: 'a1', name: 'alice', tick: 5, node: 'big' } });
    expect(followedView(s)).toEqual({ tick: 5, node: 'big', name: 'alice' });
    // A view from someone who is not presenting is ignored.
    s = watchReducer(s, { type: 'view', message: { type: 'view', from: 'x', name: 'eve', tick: 0, node: null } });
    expect(followedView(s)?.tick).toBe(5);
    s = watchReducer(s, { type: 'stopFollowing' });
    expect(followedView(s)).toBeNull();
    expect(presenterOf(s)?.name).toBe('alice');
    s = watchReducer(s, { type: 'follow' });
    expect(followedView(s)?.node).toBe('big');
  });

  it('turns its own sharing off when someone else takes over, not before its start was confirmed', () => {
    let s = watchReducer(presence(initialWatch, 'a1', [w('a1', 'alice', 1), w('b1', 'bob', 2, true, { tick: 0, node: null })]), { type: 'share', on: true });
    // An older list (sent before the server had alice's start): she keeps sharing.
    s = presence(s, 'a1', [w('a1', 'alice', 1), w('b1', 'bob', 2, true, { tick: 0, node: null })]);
    expect(s.sharing).toBe(true);
    expect(followedView(s)).toBeNull(); // a presenter follows nobody
    s = presence(s, 'a1', [w('a1', 'alice', 1, true, { tick: 1, node: null }), w('b1', 'bob', 2)]);
    expect(s.confirmed).toBe(true);
    // Bob starts again: last one wins; alice follows him.
    s = presence(s, 'a1', [w('a1', 'alice', 1), w('b1', 'bob', 2, true, { tick: 3, node: 'big' })]);
    expect(s.sharing).toBe(false);
    expect(s.takenOverBy).toBe('bob');
    expect(followedView(s)).toEqual({ tick: 3, node: 'big', name: 'bob' });
  });
});
