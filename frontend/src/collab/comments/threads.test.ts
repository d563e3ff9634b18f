import { describe, expect, it } from 'vitest';
import { applyEvent, mayResolve, parseCommentEvent, placeThreads, splitMentions, upsertThread, type Thread } from './threads';

const thread = (id: number, node: string, resolved = false, circuit = 1): Thread => ({
  id, circuit, node, created_by: 'alice', created_at: '2026-11-27T10:00:00Z', resolved, resolved_at: null, resolved_by: null,
  reopened_at: null, reopened_by: null, comments: [{ id: id * 10, author: 'alice', body: 'x', mentions: [], created_at: '2026-11-27T10:00:00Z', edited_at: null }],
});

describe('placeThreads', () => {
  it('counts open threads per present node and lists those on removed nodes', () => {
    const threads = [thread(1, 'a'), thread(2, 'a'), thread(3, 'a', true), thread(4, 'b', true), thread(5, 'gone'), thread(6, 'gone', true)];
    const { openOnNode, removed } = placeThreads(threads, ['a', 'b', 'c']);
    expect([...openOnNode]).toEqual([['a', 2]]);
    expect(removed.map((t) => t.id)).toEqual([5, 6]);
  });
  it('reattaches a thread when its node id comes back', () => {
    const threads = [thread(1, 'n')];
    expect(placeThreads(threads, []).removed.map((t) => t.id)).toEqual([1]);
    const back = placeThreads(threads, ['n']);
    expect(back.removed).toEqual([]);
    expect(back.openOnNode.get('n')).toBe(1);
  });
});

describe('events', () => {
  it('reads the socket message and ignores anything else', () => {
    expect(parseCommentEvent('{"type":"thread_deleted","circuit":1,"thread":2}')).toEqual({ type: 'thread_deleted', circuit: 1, thread: 2 });
    expect(parseCommentEvent('nope')).toBeNull();
    expect(parseCommentEvent('{"type":"thread","thread":{"id":"1"}}')).toBeNull();
    expect(parseCommentEvent('{"type":"other"}')).toBeNull();
    const t = thread(3, 'a');
    expect(parseCommentEvent(JSON.stringify({ type: 'thread', thread: t, mentioned: ['bob'] }))).toEqual({ type: 'thread', thread: t, mentioned: ['bob'] });
  });
  it('upserts in id order, and applies only events of this circuit', () => {
    const list = [thread(1, 'a'), thread(3, 'b')];
    expect(upsertThread(list, thread(2, 'c')).map((t) => t.id)).toEqual([1, 2, 3]);
    const resolved = thread(3, 'b', true);
    expect(applyEvent(list, { type: 'thread', thread: resolved, mentioned: [] }, 1)[1]!.resolved).toBe(true);
    expect(applyEvent(list, { type: 'thread', thread: thread(9, 'b', false, 2), mentioned: [] }, 1)).toBe(list);
    expect(applyEvent(list, { type: 'thread_deleted', circuit: 1, thread: 1 }, 1).map((t) => t.id)).toEqual([3]);
  });
});

describe('splitMentions', () => {
  it('finds @names as the server does (not inside e-mail addresses, trailing dot excluded)', () => {
    expect(splitMentions('hi @bob, mail ada@example.com or @carol.')).toEqual([
      { text: 'hi ', mention: false }, { text: '@bob', mention: true }, { text: ', mail ada@example.com or ', mention: false },
      { text: '@carol', mention: true }, { text: '.', mention: false },
    ]);
    expect(splitMentions('@x')).toEqual([{ text: '@x', mention: true }]);
    expect(splitMentions('plain')).toEqual([{ text: 'plain', mention: false }]);
  });
});

describe('mayResolve', () => {
  it('a writer, or the thread author who may comment', () => {
    const t = thread(1, 'a');
    expect(mayResolve(t, 'bob', true, true)).toBe(true);
    expect(mayResolve(t, 'alice', false, true)).toBe(true);
    expect(mayResolve(t, 'bob', false, true)).toBe(false);
    expect(mayResolve(t, null, false, false)).toBe(false);
  });
});
